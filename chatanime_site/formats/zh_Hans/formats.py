# Django's Simplified Chinese format groups digits by four with no separator, so a
# grouped count ("intcomma") reads 123456 there. Chinese software and papers write large
# counts with a comma every three digits (123,456), as the English pages do; only numbers
# a page groups on purpose change (USE_THOUSAND_SEPARATOR stays off).
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
