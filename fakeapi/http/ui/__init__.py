"""The web view at `/ui/`: a static page (HTML, one script, one stylesheet, shipped in
`static/` as package data) that reads the cluster through the ordinary API with the user's own
credentials. `assets` serves the files, with the headers that keep the page safe.

Imports: what `fakeapi.http` may (machinery and the HTTP responses), nothing else."""
