"""The site's own number formats, where Django's locale would not group large counts."""
