"""The TRACE environment server (`server.app`)."""
