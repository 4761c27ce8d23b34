"""The Redis cache, made to let the site carry on while Redis is away.

The cache holds only what can be rebuilt or done without: log-in throttling counters,
the cached "items left" estimate. Ratings live in PostgreSQL. So when Redis cannot be
reached, a read finds nothing, a write is dropped and an `add` succeeds (log-in throttles
then let people in rather than locking everyone out), and after one failure the cache
is not asked again for a few seconds, so a page does not wait on a dead server once per
cache call.
"""

import logging
import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)
# After a failure, how long every cache call answers "nothing there" without trying.
PAUSE_SECONDS = 5.0


class _ClientPerPool(RedisCacheClient):
    """One Redis client per connection pool, made once. Django makes a new one for every
    cache call, which costs more CPU than the call itself; a page of the rating loop makes
    several. A client is safe to share between threads: each command borrows a
    connection from the pool."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._client(connection_pool=self._get_connection_pool(write))
            self._clients[index] = client
        return client


class ResilientRedisCache(RedisCache):
    _unreachable_until = 0.0

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _ClientPerPool

    def _call(self, method, fallback, *args, **kwargs):
        if time.monotonic() < ResilientRedisCache._unreachable_until:
            return fallback
        try:
            return getattr(super(), method)(*args, **kwargs)
        except UNREACHABLE as error:
            ResilientRedisCache._unreachable_until = time.monotonic() + PAUSE_SECONDS
            logger.warning("cache unreachable, carrying on without it: %s", error)
            return fallback

    def get(self, key, default=None, version=None):
        return self._call("get", default, key, default, version)

    def get_many(self, keys, version=None):
        return self._call("get_many", {}, keys, version)

    def has_key(self, key, version=None):
        return self._call("has_key", False, key, version)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("add", True, key, value, timeout, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("set", None, key, value, timeout, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("set_many", list(data), data, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call("touch", False, key, timeout, version)

    def delete(self, key, version=None):
        return self._call("delete", False, key, version)

    def delete_many(self, keys, version=None):
        return self._call("delete_many", None, keys, version)

    def incr(self, key, delta=1, version=None):
        return self._call("incr", delta, key, delta, version)

    def clear(self):
        return self._call("clear", False)
