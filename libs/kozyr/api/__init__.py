"""Python code generated from protos/ by `make proto` (tools/protogen.py); never edited.

A proto at `protos/kozyr/<area>/v1/x.proto` is imported as
`from kozyr.api.<area>.v1 import x_pb2, x_pb2_grpc`. The generated files are git-ignored;
their directories are implicit namespace packages.
"""
