"""One module per `gmb` subcommand: `<name>_arguments(parser)` adds its options,
`<name>_handler(args, extra, argv)` runs it and returns the exit status; cli.COMMANDS names
them. Handlers import what they need, so `run`, `summary` and `compare` work with the standard
library alone."""
