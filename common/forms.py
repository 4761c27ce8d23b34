"""How every app's views handle a post: check the form, call the service, and show either
the first thing wrong (a field that does not validate, or the service's refusal) or the
success. Nothing is changed when the answer is no.

- `attempt` for a view that renders the page again with the refusal (status 422, what was
  typed kept);
- `submit` for a view that redirects and shows the outcome as a message."""

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from .errors import Refusal

# The status of a page shown again because what was posted was refused: the request was
# understood, its content could not be processed (RFC 9110, 15.5.21).
REFUSED = 422


def refused_as_invalid(check: Callable[..., Any], *args: Any) -> Any:
    """`check(*args)`, a service's parser, inside a form's `clean_<field>`: its refusal
    becomes the field's error, so the page names the field like any other."""
    try:
        return check(*args)
    except Refusal as refusal:
        raise forms.ValidationError(refusal.message) from None


def first_error(form: forms.Form) -> str:
    """The message of the first field (in the form's order) that does not validate."""
    for field in [*form.fields, NON_FIELD_ERRORS]:
        if field in form.errors:
            # An ErrorList item reads as its message (a ValidationError is rendered); the
            # stubs type the stored entries instead.
            return str(form.errors[field][0])
    return ""


def attempt(form: forms.Form, change: Callable[[dict[str, Any]], Any]) -> tuple[str | None, Any]:
    """(None, what the service returned) when the form validates and the service agrees;
    (why not, None) otherwise, having changed nothing."""
    if not form.is_valid():
        return first_error(form), None
    try:
        return None, change(form.cleaned_data)
    except Refusal as refusal:
        return refusal.message, None


def submit(
    request: HttpRequest,
    form: forms.Form,
    change: Callable[[dict[str, Any]], Any],
    *,
    success: str | Callable[[Any], str],
    then: str,
) -> HttpResponse:
    """`change` runs when the form validates; the refusal or the success (a text, or made
    from what the service returned) is shown as a message on the page at `then`."""
    error, result = attempt(form, change)
    if error is not None:
        messages.error(request, error)
    else:
        messages.success(request, success(result) if callable(success) else success)
    return redirect(then)
