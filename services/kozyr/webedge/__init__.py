"""The web edge: a gRPC-Web proxy in front of the client-facing services, for browsers.

A browser cannot speak gRPC (HTTP/2 with trailers); it can speak gRPC-Web, which frames
the same protobuf messages in an HTTP/1.1 body and sends the status as a last frame.
This process accepts gRPC-Web calls, forwards each as a plain gRPC call to the service
its path names (table, matchmaking, bots, clock) and writes the answers back framed, as
Envoy's `grpc_web` filter does (docs/architecture.md, "The web edge"; docs/api.md).
"""
