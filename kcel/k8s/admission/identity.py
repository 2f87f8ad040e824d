"""Who the requests kcel builds come from, unless told: one user for every command (`kcel admit`, `audit`,
`match-webhooks`, the REPL, `kcel test`'s suites and cases) and for `request_from_objects`.

A request with no username is one the API server never sends (even an anonymous one is `system:anonymous`), and a
match condition on `request.userInfo.username` then fails with `no such key`; so kcel names a user, as an
authenticated one: in `system:authenticated`, which the API server adds to every authenticated user's groups.
Imports nothing, so that the commands' option tables stay cheap to build.
"""

from __future__ import annotations

from collections.abc import Iterable

DEFAULT_USER = "kcel-user"
AUTHENTICATED = "system:authenticated"


def authenticated_groups(groups: Iterable[str]) -> list[str]:
    """`groups` with `system:authenticated`, once."""
    return list(dict.fromkeys([*groups, AUTHENTICATED]))
