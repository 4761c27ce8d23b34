"""The results worker yields the CPU to annotators' requests on a saturated machine: a lower
CPU weight in docker-compose.yml, and the same in the load benchmark's stack (a Linux
scheduling group of its own with a higher nice value)."""

import os
import re
import time
from pathlib import Path

import pytest

from tests.fixtures.services import (
    REPO,
    autogroups_enabled,
    database_url_of_test_database,
    publishing_to,
    running_worker,
)

DOCKER_DEFAULT_CPU_SHARES = 1024


def compose_services() -> dict[str, str]:
    """Each service of docker-compose.yml with the text of its block."""
    text = (REPO / "docker-compose.yml").read_text()
    block = text.split("\nservices:\n", 1)[1].split("\nvolumes:\n", 1)[0]
    names = re.findall(r"^  ([a-z]+):\n", block, flags=re.M)
    bodies = re.split(r"^  [a-z]+:\n", block, flags=re.M)[1:]
    return dict(zip(names, bodies, strict=True))


def cpu_shares(body: str) -> int:
    found = re.search(r"^    cpu_shares: (\d+)$", body, flags=re.M)
    return int(found.group(1)) if found else DOCKER_DEFAULT_CPU_SHARES


def test_compose_gives_the_worker_less_cpu_weight_than_the_web_server():
    services = compose_services()
    assert {"web", "worker", "postgres"} <= set(services)
    assert cpu_shares(services["worker"]) < cpu_shares(services["web"])
    # The database serves the annotators' requests: it keeps the web server's weight.
    assert cpu_shares(services["postgres"]) == cpu_shares(services["web"])


@pytest.mark.integration
@pytest.mark.skipif(not autogroups_enabled(), reason="Linux autogroups are switched off")
def test_a_worker_started_with_a_nice_value_has_a_scheduling_group_of_its_own(postgres, redis_url):
    queue = f"cpu-weight-{os.getpid()}-{time.monotonic_ns()}"
    with (
        publishing_to(redis_url, queue),
        running_worker(
            database_url=database_url_of_test_database(),
            redis_url=redis_url,
            queues=[queue],
            pool="prefork",
            cpu_nice=6,
        ) as worker,
    ):
        assert os.getsid(worker.pid) == worker.pid != os.getsid(0)
        group = Path(f"/proc/{worker.pid}/autogroup").read_text().split()
        assert group[-2:] == ["nice", "6"]
        # A process whose session began at boot stays in the root group, for which the
        # kernel prints nothing; any other group has its own name.
        mine = Path("/proc/self/autogroup").read_text().split()
        assert group[0].startswith("/autogroup-")
        assert not mine or group[0] != mine[0]
