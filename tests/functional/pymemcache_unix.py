# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""pytest plugin (-p pymemcache_unix): pymemcache's own integration tests
against a unix socket. They build every client from (host, port) (their
--server and --port options); with --server unix the spec becomes the
socket path in $SEGCACHED_UNIX_SOCKET, the way pymemcache itself takes
a path ("/path" or "unix:/path", normalize_server_spec). Used by
test_unix_socket.py."""

import os

from pymemcache.client import base, hash as hash_client

_PATH = os.environ["SEGCACHED_UNIX_SOCKET"]
_normalize = base.normalize_server_spec


def _to_unix(server):
    if isinstance(server, (tuple, list)) and len(server) == 2 and server[0] == "unix":
        return _PATH
    return _normalize(server)


base.normalize_server_spec = _to_unix
hash_client.normalize_server_spec = _to_unix
