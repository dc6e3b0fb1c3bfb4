"""The web table page's server: the built page (clients/web/dist/page), where the gRPC-Web
edge is (`config.json`) and, on a development stack only, a player token for a name
(`POST /dev/token`). The page itself talks to the services through the web edge only.
"""
