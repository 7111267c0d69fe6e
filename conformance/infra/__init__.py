"""Test infrastructure: the test authorization server and the reference's fork server."""
