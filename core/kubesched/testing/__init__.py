"""Helpers for testing kubesched and its plugins against real Kubernetes components."""
