/// The system libedit headers, exposed to Swift as the `CLibedit` module.
///
/// Only `histedit.h` is included: it declares the native editline and history API the REPL
/// uses. `editline/readline.h` (the GNU readline emulation) is left out on purpose, because it
/// adds global names such as `history_*`, `readline` and `rl_*` that would clash with or
/// shadow the native API and are never used here.
///
/// `pkg-config libedit` adds `-I/usr/include/editline`, but `histedit.h` itself lives directly
/// in `/usr/include`, so the angle-bracket include below resolves through the default system
/// search path on Debian/Ubuntu and through the pkg-config path on other layouts.
#ifndef CLIBEDIT_SHIM_H
#define CLIBEDIT_SHIM_H

#include <stdio.h>
#include <histedit.h>

#endif
