"""The REST API (FastAPI): a thin layer over the services; ``create_app(services)``."""
