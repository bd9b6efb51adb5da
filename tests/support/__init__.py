"""What the tests share: servers and kubectl, waiting and polling, typed views (no test module
imports another test module; they import this package)."""
