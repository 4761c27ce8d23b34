"""What the staff screens share: the pager and the way back after a post. Posts go through
`common.forms` (`attempt`, `submit`) like every app's."""

from collections.abc import Sequence
from typing import Any

from django import forms
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest

from common.redirects import safe_next

PAGE_SIZE = 50


def page_of(form: forms.Form, rows: QuerySet[Any] | Sequence[Any]) -> Page[Any]:
    """The page the query string asks for; a page out of range shows the last one."""
    return Paginator(rows, PAGE_SIZE).get_page(form.cleaned_data.get("page"))


def back(request: HttpRequest, default: str) -> str:
    """Back to the staff page the form was on (only ever a staff page), else `default`."""
    return safe_next(request, default, within="/staff/")
