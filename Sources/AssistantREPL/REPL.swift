// REPL core.
