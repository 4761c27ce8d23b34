"""The annotator's loop for locust: take the next item, rate it, submit, repeat.

Run by bench/load.py, which prepares the accounts and passes them in LOAD_ACCOUNTS (a JSON
file of session and CSRF cookies, one per annotator). Each simulated annotator signs in
with its own session; with LOAD_THINK_SECONDS unset it never waits between items (a closed
loop), so the figures are the platform's capacity.
"""

import itertools
import json
import os
import re
from pathlib import Path

from locust import FastHttpUser, between, task

ACCOUNTS = json.loads(Path(os.environ["LOAD_ACCOUNTS"]).read_text(encoding="utf-8"))
_next_account = itertools.cycle(ACCOUNTS["annotators"])
ITEM_ADDRESS = re.compile(r"/annotate/([A-Za-z0-9_-]+)/$")
FORM_ACTION = re.compile(r'action="/annotate/([A-Za-z0-9_-]+)/"')
RATINGS = {f"{side}-{slug}": "4" for side in "ab" for slug in ACCOUNTS["metrics"]}


def _gist(response) -> str:
    """What the page says instead, for the failure table."""
    text = response.text or ""
    for pattern in (
        r'role="alert"[^>]*>([^<]+)',
        r'role="status"[^>]*>([^<]+)',
        r"<h1[^>]*>([^<]+)",
    ):
        found = re.search(pattern, text)
        if found:
            return found.group(1).strip()[:80]
    return text[:80]


THINK = float(os.environ.get("LOAD_THINK_SECONDS", "0"))


class Annotator(FastHttpUser):
    # Seconds spent reading and rating between two submissions: 0 for a closed loop that
    # measures capacity; a real annotator needs a minute or more for nine metrics x two.
    wait_time = between(THINK / 2, THINK * 3 / 2)

    # Behind a TLS-terminating proxy, as in production: the proxy says the request was
    # HTTPS, and the browser sends its origin with every post.
    def on_start(self):
        account = next(_next_account)
        self.headers = {
            "Cookie": f"sessionid={account['session']}; csrftoken={account['csrf']}",
            "X-Forwarded-Proto": "https",
            "Origin": f"https://{ACCOUNTS['host']}",
            "X-CSRFToken": account["csrf"],
        }
        self.token = None

    def _token_of(self, response):
        match = FORM_ACTION.search(response.text or "")
        return match.group(1) if match else None

    @task
    def rate_next_item(self):
        if self.token is None:
            # /annotate/ redirects to the item's own address; follow it by hand so that
            # the second request carries the session too.
            with self.client.get(
                "/annotate/",
                headers=self.headers,
                name="next item",
                allow_redirects=False,
                catch_response=True,
            ) as response:
                location = response.headers.get("Location") or ""
                match = ITEM_ADDRESS.search(location)
                if response.status_code != 302 or match is None:
                    response.failure(f"no item: HTTP {response.status_code} {location}")
                    return
            with self.client.get(
                location, headers=self.headers, name="rating page", catch_response=True
            ) as response:
                self.token = self._token_of(response)
                if response.status_code != 200 or self.token is None:
                    response.failure(
                        f"no rating form: HTTP {response.status_code} {_gist(response)}"
                    )
                    return
        form = dict(RATINGS, preference="tie")
        with self.client.post(
            f"/annotate/{self.token}/",
            data=form,
            headers=dict(self.headers, **{"HX-Request": "true"}),
            name="submit + next item",
            catch_response=True,
        ) as response:
            if response.status_code != 200:
                response.failure(f"HTTP {response.status_code}")
                self.token = None
                return
            # The response is the next item; its form carries the next token.
            self.token = self._token_of(response)
