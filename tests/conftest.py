"""Shared test settings: every test registers the plugins it uses (nothing installed is assumed)."""
