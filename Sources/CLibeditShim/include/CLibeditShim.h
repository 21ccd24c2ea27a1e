/// Fixed-argument wrappers around libedit, plus a small editing session.
///
/// Swift cannot call C-variadic functions, and `el_set`, `el_get` and `history` take `...`,
/// so every call the REPL needs is wrapped here in a function with a fixed signature.
///
/// The session (`cle_session`) exists because two things cannot be done safely from Swift:
///
/// - Signal handling. A `SIGINT` handler must only touch async-signal-safe state, and in a
///   multi-threaded process the kernel may deliver the signal to any thread, not the one
///   blocked in `read(2)`. The handler therefore only sets a flag and writes one byte to a
///   per-session pipe; the session's read function waits on both the terminal and that pipe,
///   so Ctrl-C wakes the reading thread wherever the signal landed.
/// - Output while the user types. libedit is not thread-safe. The session's read function
///   holds a mutex while libedit processes a key and releases it only while it waits for the
///   next one (lldb's Editline does the same), so `cle_session_print_async` can clear the
///   input, print and redraw without racing libedit's own screen updates.
#ifndef CLIBEDIT_SHIM_H_WRAPPERS
#define CLIBEDIT_SHIM_H_WRAPPERS

#include <stddef.h>
#include <stdio.h>
#include <histedit.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - el_set / el_get wrappers

/// A libedit prompt function: returns the prompt for the line being edited.
typedef char *(*cle_prompt_function)(EditLine *editline);

/// A libedit editor function, as registered with `EL_ADDFN`; returns a `CC_*` code.
typedef unsigned char (*cle_editor_function)(EditLine *editline, int key);

/// `el_set(EL_PROMPT_ESC, prompt, ignore)`: characters between two `ignore` characters are
/// printed but take no column, which keeps colour escapes out of libedit's cursor math.
int cle_set_prompt(EditLine *editline, cle_prompt_function prompt, char ignore);

/// `el_set(EL_EDITOR, mode)`, mode `"emacs"` or `"vi"`.
int cle_set_editor(EditLine *editline, const char *mode);

/// `el_set(EL_TERMINAL, type)`: the terminfo entry to use instead of `$TERM`.
int cle_set_terminal(EditLine *editline, const char *type);

/// `el_set(EL_SIGNAL, flag)`. The session sets 0: with 1, libedit re-raises signals to the
/// whole process group, and the REPL wants to handle Ctrl-C itself.
int cle_set_signal(EditLine *editline, int flag);

/// `el_set(EL_CLIENTDATA, data)`.
int cle_set_clientdata(EditLine *editline, void *data);

/// `el_get(EL_CLIENTDATA)`, or NULL when unset.
void *cle_get_clientdata(EditLine *editline);

/// `el_set(EL_HIST, history, history_handle)`: attaches a history list for up/down keys.
int cle_set_history(EditLine *editline, History *history_handle);

/// `el_set(EL_ADDFN, name, help, function)`. Register before binding a key to `name`.
int cle_add_function(EditLine *editline, const char *name, const char *help, cle_editor_function function);

/// `el_set(EL_BIND, key, function_name, NULL)`, e.g. `("^I", "assistant-complete")`.
int cle_bind(EditLine *editline, const char *key, const char *function_name);

/// `el_set(EL_PREP_TERM, flag)`: 1 puts the terminal into libedit's raw mode now, 0 restores
/// the normal mode.
int cle_set_prepared_terminal(EditLine *editline, int flag);

/// `el_set(EL_REFRESH)`: forgets what libedit believes is on screen and redraws the prompt
/// and the current input from the cursor's position.
int cle_refresh(EditLine *editline);

/// `el_get(EL_GETTC, "co")`: the terminal width libedit works with, or 80 when unknown.
int cle_get_columns(EditLine *editline);

// MARK: - history wrappers

/// `history(H_SETSIZE, size)`.
int cle_history_set_size(History *history_handle, int size);

/// `history(H_SETUNIQUE, flag)`: with 1, a line equal to the previous one is not stored.
int cle_history_set_unique(History *history_handle, int flag);

/// `history(H_ENTER, line)`.
int cle_history_enter(History *history_handle, const char *line);

/// `history(H_LOAD, path)`: the number of entries read, or -1.
int cle_history_load(History *history_handle, const char *path);

/// `history(H_SAVE_FP, file)`: writes to an already open file, so the caller chooses how the
/// file is created (mode 0600, temporary name, rename into place); `H_SAVE` truncates the
/// history file in place, so a crash mid-write would lose it.
int cle_history_save_fp(History *history_handle, FILE *file);

/// A history file holding `line` alone, exactly as `H_SAVE_FP` writes one: libedit's header
/// line (`_HiStOrY_V2_`), then the line encoded the way `H_LOAD` decodes it, each ending in a
/// newline. From `malloc` (the caller frees it); NULL when it cannot be made. Lets a caller
/// append one line to a history file instead of rewriting it.
char *cle_history_encode(const char *line);

/// Receives one history line (`H_FIRST`, then `H_NEXT`: newest first).
typedef void (*cle_history_visitor)(void *context, const char *line);

/// Calls `visit` for every history line, newest first; returns how many there were. The
/// history's own cursor moves; libedit repositions it before each use.
int cle_history_each(History *history_handle, void *context, cle_history_visitor visit);

// MARK: - Character widths

/// `wcwidth(3)` of `code_point` as the C library answers it in a UTF-8 locale (`C.UTF-8`,
/// else `C.utf8` or `en_US.UTF-8`), whatever the process's own locale is: terminals such as
/// tmux, xterm and VTE lay text out by these widths. -1 for a code point the library counts
/// as not printable; -2 when the C library has no UTF-8 locale at all.
int cle_utf8_wcwidth(unsigned int code_point);

/// The C library and its version, e.g. `glibc 2.36`: where `cle_utf8_wcwidth` comes from.
const char *cle_libc_version(void);

// MARK: - Session

/// One line editor on one terminal, with its history, lock, prompt and wake-up pipe.
typedef struct cle_session cle_session;

/// Switches `LC_CTYPE` to the environment's locale, or to `C.UTF-8` when that is not UTF-8.
/// libedit decodes input with the C library's multibyte functions, and a Swift program starts
/// in the "C" locale, where every non-ASCII byte (any Cyrillic letter) is invalid.
/// Returns 1 when the resulting character set is UTF-8. Process-wide: call before opening.
int cle_prepare_utf8_locale(void);

/// Opens a session on the given descriptors (they are duplicated, the caller keeps its own),
/// in emacs mode, with `EL_SIGNAL 0` and the session's own read function. `terminal_type`
/// may be NULL for `$TERM`. `context` is returned by `cle_context` inside callbacks.
/// Installs the process's SIGINT and SIGWINCH handlers while at least one session is open.
/// Returns NULL when libedit or the pipe cannot be set up.
cle_session *cle_session_open(const char *program, int input_fd, int output_fd, const char *terminal_type, void *context);

/// Ends libedit (restoring the terminal), frees the history and the session, and restores
/// the previous signal handlers when this was the last open session.
void cle_session_close(cle_session *session);

/// The session's `EditLine`, for further `cle_set_*` calls made before the first read.
EditLine *cle_session_editline(cle_session *session);

/// The session's history list (already attached to the editor).
History *cle_session_history(cle_session *session);

/// The `context` given to `cle_session_open`, found from the `EditLine` a callback receives.
void *cle_context(EditLine *editline);

/// The session an `EditLine` belongs to, for editor functions that need to print.
cle_session *cle_editline_session(EditLine *editline);

/// Replaces the prompt (copied). Bytes between two `\1` characters take no column.
void cle_session_set_prompt(cle_session *session, const char *prompt);

/// Puts `text` (copied) on the line of the next `cle_session_gets`, as if typed, for the user
/// to send again or edit; a later call replaces it, NULL drops it.
void cle_session_set_next_input(cle_session *session, const char *text);

/// Reads one line with editing. Returns the line (with its trailing newline, owned by
/// libedit and valid until the next call), or NULL: then `*interrupted` is 1 when Ctrl-C (or
/// `cle_session_interrupt`) ended the read, and `*count` is 0 at end of input.
/// Must not be called by two threads at once.
const char *cle_session_gets(cle_session *session, int *count, int *interrupted);

/// 1 when the terminal can move the cursor up and clear to the end of the screen (termcap
/// `up` and `cd`); 0 for one that cannot (`TERM=dumb`, an unknown terminal). Without them the
/// session never writes an escape sequence: output printed while a line is edited goes below
/// it, and the prompt and input are drawn again under it.
int cle_session_has_cursor_control(cle_session *session);

/// Blocks, while no line is read, until the user presses Ctrl-C (returns 1) or
/// `cle_session_cancel_wait` is called with the same `ticket` (returns 0; also when that call
/// came first). On Ctrl-C the cursor goes back to the start of its line, so the next line
/// printed covers the terminal's `^C`. Must not overlap a read; one wait at a time; each wait
/// takes a new ticket.
int cle_session_wait_for_interrupt(cle_session *session, unsigned int ticket);

/// Ends the wait with `ticket`, or makes it end at once if it has not started. Safe from any
/// thread.
void cle_session_cancel_wait(cle_session *session, unsigned int ticket);

/// Makes a read in progress (or the next one) return as interrupted. Safe from any thread.
void cle_session_interrupt(cle_session *session);

/// Called after the terminal was resized and libedit was told (`el_resize`), with the new
/// width, while the session lock is held and before the prompt and input are drawn again, so
/// the handler may replace the prompt. It must not block: it runs on the reading thread, or
/// on a thread printing with `cle_session_print_async`.
typedef void (*cle_resize_function)(cle_session *session, int columns, void *context);

/// Installs the resize handler (NULL for none).
///
/// On `SIGWINCH` the session moves the cursor back to the start of the prompt, clears below,
/// tells libedit the new size and redraws the prompt and input for it.
void cle_session_set_resize_handler(cle_session *session, cle_resize_function handler);

/// Returns the hint for the line typed so far (`line`, the whole input), as a string from
/// `malloc` that the session frees, or NULL for none. It must be quick, must not print and must
/// not call back into the session: it runs inside libedit's redraw, with the lock held.
typedef char *(*cle_hint_function)(cle_session *session, const char *line, void *context);

/// Installs the hint function (NULL for none). Its hint is drawn at the right end of the input
/// row (libedit's right prompt, `EL_RPROMPT`) whenever libedit redraws the whole line, and only
/// on a terminal with cursor control; bytes between two `\1` characters take no column. The
/// right prompt is left out when the input leaves no room for it.
void cle_session_set_hint_function(cle_session *session, cle_hint_function hint);

/// Whether the terminal re-wraps a wrapped line when its width changes, moving the cursor
/// with the text (tmux, VTE: 1) or keeps its rows as they are (xterm: 0); -1, the default,
/// when that is not known. A resize then finds the prompt's first row by that layout; when
/// unknown, by the fewer rows of the two, which never erases a line printed above the
/// prompt (part of the old prompt may stay on screen).
void cle_session_set_reflow(cle_session *session, int reflows);

/// From an editor function (the lock is held): moves the cursor to the start of the prompt
/// and clears to the end of the screen, so the prompt and the line can be replaced and drawn
/// again with `cle_refresh`.
void cle_session_clear_edit_area(cle_session *session);

/// From an editor function: 1 when more input bytes are waiting (the rest of an escape
/// sequence such as an arrow key), 0 when the last key stands alone.
int cle_session_input_pending(cle_session *session);

/// Prints `length` bytes. While a line is being edited it first clears the prompt and the
/// partial input, then prints, then redraws both, so the user's typing is never garbled.
/// Safe from any thread, and from inside an editor function on the reading thread.
void cle_session_print_async(cle_session *session, const char *text, size_t length);

#ifdef __cplusplus
}
#endif

#endif
