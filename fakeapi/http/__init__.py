"""HTTP: the aiohttp front end (routing, resource handlers, query options, discovery, OpenAPI,
watch and pod streams, tables and partial metadata, protobuf bodies).

Imports: everything of the core below it (`fakeapi.cluster` and its layers), never the
client, the runtime or a component."""
