"""Pages of the API's lists. A page number that is not one (`?page=two`, `?page=0`) is a
400 naming the parameter, as a bad filter is; DRF would answer 404 "Invalid page", which
reads as a wrong address. A page past the last stays a 404 that says how many there are.
`page_size` (1 to 1000, default 100) is honoured or refused: DRF would ignore it, and its
`next` link would carry it as if it had been."""

from typing import Any

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination

from common.parsing import whole_number

MAX_PAGE_SIZE = 1000


class Pages(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def get_page_size(self, request: Any) -> int | None:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        size = whole_number(raw)
        if not size or size > MAX_PAGE_SIZE:
            raise ValidationError(
                {self.page_size_query_param: f"a whole number from 1 to {MAX_PAGE_SIZE}"}
            )
        return size

    def get_page_number(self, request: Any, paginator: Any) -> Any:
        raw = request.query_params.get(self.page_query_param)
        if raw is None or raw in self.last_page_strings:
            return super().get_page_number(request, paginator)
        number = whole_number(raw)
        if not number:
            raise ValidationError({self.page_query_param: "must be a whole number from 1"})
        if number > paginator.num_pages:
            raise NotFound(f"page {number} is past the last page ({paginator.num_pages})")
        return number
