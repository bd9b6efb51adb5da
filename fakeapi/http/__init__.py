"""HTTP: the aiohttp front end. `app` builds the application (the authenticating and
authorizing guard, the routes); `resources` serves /api and /apis through the kind table,
dispatching on the handler type a row names; `options` parses query options, `responses`
builds JSON and Status answers, `system` serves version, health, metrics and OpenAPI; then
discovery, OpenAPI documents, watch and pod streams, tables and partial metadata, protobuf
bodies.

Imports: everything of the core below it (`fakeapi.cluster` and its layers), never the
client, the runtime or a component."""
