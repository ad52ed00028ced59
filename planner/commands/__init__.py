"""One module per CLI command (``NAME_cmd.py``): ``add_parser(subparsers)`` sets ``func``."""
