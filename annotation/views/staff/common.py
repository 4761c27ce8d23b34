"""What the staff screens share: the pager, the way back after a post, and the pattern
"check the form, call the service, show its refusal or the success, redirect"."""

from collections.abc import Callable, Sequence
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import NON_FIELD_ERRORS
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from common.redirects import safe_next

from ... import services

PAGE_SIZE = 50


def page_of(form: forms.Form, rows: QuerySet[Any] | Sequence[Any]) -> Page[Any]:
    """The page the query string asks for; a page out of range shows the last one."""
    return Paginator(rows, PAGE_SIZE).get_page(form.cleaned_data.get("page"))


def back(request: HttpRequest, default: str) -> str:
    """Back to the staff page the form was on (only ever a staff page), else `default`."""
    return safe_next(request, default, within="/staff/")


def first_error(form: forms.Form) -> str:
    """The message of the first field (in the form's order) that does not validate."""
    for field in [*form.fields, NON_FIELD_ERRORS]:
        if field in form.errors:
            # An ErrorList item reads as its message (a ValidationError is rendered); the
            # stubs type the stored entries instead.
            return str(form.errors[field][0])
    return ""


def attempt(form: forms.Form, change: Callable[[dict], Any]) -> tuple[str | None, Any]:
    """(None, what the service returned) when the form validates and the service agrees;
    (why not, None) otherwise, having changed nothing."""
    if not form.is_valid():
        return first_error(form), None
    try:
        return None, change(form.cleaned_data)
    except services.AnnotationError as refusal:
        return refusal.message, None


def submit(
    request: HttpRequest,
    form: forms.Form,
    change: Callable[[dict], Any],
    *,
    success: str | Callable[[Any], str],
    then: str,
) -> HttpResponse:
    """The staff post: `change` runs when the form validates; the refusal or the success
    (a text, or made from what the service returned) is shown on the page at `then`."""
    error, result = attempt(form, change)
    if error is not None:
        messages.error(request, error)
    else:
        messages.success(request, success(result) if callable(success) else success)
    return redirect(then)
