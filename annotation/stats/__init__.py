"""Pure statistics: arrays and count tables in, numbers out. Nothing here knows the ORM."""
