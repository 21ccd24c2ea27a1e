/// Fixed-argument wrappers around libedit and the editing session described in
/// include/CLibeditShim.h. Kept in C because Swift cannot call variadic functions and
/// because signal handlers must stay async-signal-safe.

// glibc declares wcwidth(3) only with X/Open extensions enabled.
#define _GNU_SOURCE 1

#include "CLibeditShim.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

// MARK: - el_set / el_get wrappers

int cle_set_prompt(EditLine *editline, cle_prompt_function prompt, char ignore) {
    return el_set(editline, EL_PROMPT_ESC, prompt, ignore);
}

int cle_set_editor(EditLine *editline, const char *mode) { return el_set(editline, EL_EDITOR, mode); }

int cle_set_terminal(EditLine *editline, const char *type) { return el_set(editline, EL_TERMINAL, type); }

int cle_set_signal(EditLine *editline, int flag) { return el_set(editline, EL_SIGNAL, flag); }

int cle_set_clientdata(EditLine *editline, void *data) { return el_set(editline, EL_CLIENTDATA, data); }

void *cle_get_clientdata(EditLine *editline) {
    void *data = NULL;
    if (el_get(editline, EL_CLIENTDATA, &data) != 0) return NULL;
    return data;
}

int cle_set_history(EditLine *editline, History *history_handle) {
    return el_set(editline, EL_HIST, history, history_handle);
}

int cle_add_function(EditLine *editline, const char *name, const char *help, cle_editor_function function) {
    return el_set(editline, EL_ADDFN, name, help, function);
}

int cle_bind(EditLine *editline, const char *key, const char *function_name) {
    return el_set(editline, EL_BIND, key, function_name, (const char *)NULL);
}

int cle_set_prepared_terminal(EditLine *editline, int flag) { return el_set(editline, EL_PREP_TERM, flag); }

int cle_refresh(EditLine *editline) { return el_set(editline, EL_REFRESH); }

int cle_get_columns(EditLine *editline) {
    int columns = 0;
    if (el_get(editline, EL_GETTC, "co", &columns, (void *)NULL) != 0 || columns <= 0) return 80;
    return columns;
}

// MARK: - history wrappers

int cle_history_set_size(History *history_handle, int size) {
    HistEvent event;
    return history(history_handle, &event, H_SETSIZE, size);
}

int cle_history_set_unique(History *history_handle, int flag) {
    HistEvent event;
    return history(history_handle, &event, H_SETUNIQUE, flag);
}

int cle_history_enter(History *history_handle, const char *line) {
    HistEvent event;
    return history(history_handle, &event, H_ENTER, line);
}

int cle_history_load(History *history_handle, const char *path) {
    HistEvent event;
    return history(history_handle, &event, H_LOAD, path);
}

int cle_history_save_fp(History *history_handle, FILE *file) {
    HistEvent event;
    return history(history_handle, &event, H_SAVE_FP, file);
}

char *cle_history_encode(const char *line) {
    History *single = history_init();
    if (!single) return NULL;
    HistEvent event;
    char *buffer = NULL;
    // A real file: H_SAVE_FP sets the mode of the file it writes (fchmod), which a memory
    // stream has none of.
    FILE *file = tmpfile();
    int saved = -1;
    if (file && history(single, &event, H_SETSIZE, 1) >= 0 && history(single, &event, H_ENTER, line) >= 0) {
        saved = history(single, &event, H_SAVE_FP, file);
    }
    history_end(single);
    long length = saved >= 0 && fflush(file) == 0 ? ftell(file) : -1;
    if (length >= 0 && (buffer = malloc((size_t)length + 1)) != NULL) {
        rewind(file);
        if (fread(buffer, 1, (size_t)length, file) == (size_t)length) {
            buffer[length] = '\0';
        } else {
            free(buffer);
            buffer = NULL;
        }
    }
    if (file) fclose(file);
    return buffer;
}

int cle_history_each(History *history_handle, void *context, cle_history_visitor visit) {
    HistEvent event;
    int count = 0;
    for (int status = history(history_handle, &event, H_FIRST); status == 0 && event.str;
         status = history(history_handle, &event, H_NEXT)) {
        visit(context, event.str);
        count += 1;
    }
    return count;
}

// MARK: - Character widths

static pthread_once_t cle_utf8_locale_once = PTHREAD_ONCE_INIT;
static locale_t cle_utf8_locale = (locale_t)0;

static void cle_open_utf8_locale(void) {
    static const char *const names[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8"};
    for (size_t index = 0; index < sizeof names / sizeof names[0]; index++) {
        locale_t locale = newlocale(LC_CTYPE_MASK, names[index], (locale_t)0);
        if (!locale) continue;
        locale_t previous = uselocale(locale);
        int utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
        uselocale(previous);
        if (utf8) {
            cle_utf8_locale = locale;
            return;
        }
        freelocale(locale);
    }
}

int cle_utf8_wcwidth(unsigned int code_point) {
    pthread_once(&cle_utf8_locale_once, cle_open_utf8_locale);
    if (!cle_utf8_locale) return -2;
    // uselocale is per thread: the process's locale and other threads are not disturbed.
    locale_t previous = uselocale(cle_utf8_locale);
    int width = wcwidth((wchar_t)code_point);
    uselocale(previous);
    return width;
}

static char cle_libc_version_text[64] = "unknown C library";
static pthread_once_t cle_libc_version_once = PTHREAD_ONCE_INIT;

static void cle_format_libc_version(void) {
#ifdef __GLIBC__
    snprintf(cle_libc_version_text, sizeof cle_libc_version_text, "glibc %s", gnu_get_libc_version());
#endif
}

const char *cle_libc_version(void) {
    pthread_once(&cle_libc_version_once, cle_format_libc_version);
    return cle_libc_version_text;
}

// MARK: - Signals

// Each open session owns one slot. The handler only reads the slot's pipe descriptor, sets
// the slot's flags and writes one byte: all async-signal-safe. Slots hold `fd + 1` so that
// the zero-initialised table means "free".
enum { CLE_MAX_SESSIONS = 32 };
static atomic_int cle_slot_wake_fd[CLE_MAX_SESSIONS];
static atomic_int cle_slot_interrupt[CLE_MAX_SESSIONS];
static atomic_int cle_slot_resize[CLE_MAX_SESSIONS];

static pthread_mutex_t cle_signal_lock = PTHREAD_MUTEX_INITIALIZER;
static int cle_open_sessions = 0;
static struct sigaction cle_previous_sigint;
static struct sigaction cle_previous_sigwinch;

static void cle_wake_slot(int slot) {
    int fd = atomic_load(&cle_slot_wake_fd[slot]) - 1;
    if (fd < 0) return;
    char byte = 0;
    ssize_t ignored = write(fd, &byte, 1);
    (void)ignored;
}

static void cle_on_signal(int signal_number) {
    int saved_errno = errno;
    for (int slot = 0; slot < CLE_MAX_SESSIONS; slot++) {
        if (atomic_load(&cle_slot_wake_fd[slot]) == 0) continue;
        if (signal_number == SIGINT) {
            atomic_store(&cle_slot_interrupt[slot], 1);
        } else {
            atomic_store(&cle_slot_resize[slot], 1);
        }
        cle_wake_slot(slot);
    }
    errno = saved_errno;
}

// Without SA_RESTART, so a blocking call in the thread that receives the signal returns
// EINTR instead of swallowing the first Ctrl-C.
static void cle_install_handlers(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = cle_on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(SIGINT, &action, &cle_previous_sigint);
    sigaction(SIGWINCH, &action, &cle_previous_sigwinch);
}

static void cle_restore_handlers(void) {
    sigaction(SIGINT, &cle_previous_sigint, NULL);
    sigaction(SIGWINCH, &cle_previous_sigwinch, NULL);
}

static int cle_claim_slot(int wake_fd) {
    pthread_mutex_lock(&cle_signal_lock);
    int claimed = -1;
    for (int slot = 0; slot < CLE_MAX_SESSIONS; slot++) {
        if (atomic_load(&cle_slot_wake_fd[slot]) == 0) {
            atomic_store(&cle_slot_interrupt[slot], 0);
            atomic_store(&cle_slot_resize[slot], 0);
            atomic_store(&cle_slot_wake_fd[slot], wake_fd + 1);
            claimed = slot;
            break;
        }
    }
    if (claimed >= 0 && cle_open_sessions++ == 0) cle_install_handlers();
    pthread_mutex_unlock(&cle_signal_lock);
    return claimed;
}

static void cle_release_slot(int slot) {
    pthread_mutex_lock(&cle_signal_lock);
    atomic_store(&cle_slot_wake_fd[slot], 0);
    if (--cle_open_sessions == 0) cle_restore_handlers();
    pthread_mutex_unlock(&cle_signal_lock);
}

// MARK: - Session

struct cle_session {
    EditLine *editline;
    History *history;
    FILE *input;
    FILE *output;
    FILE *errors;
    int input_fd;
    int wake_read;
    int wake_write;
    int slot;
    pthread_mutex_t lock;
    char *prompt;
    void *context;
    cle_resize_function on_resize;
    cle_hint_function hint;
    // The hint last drawn as the right prompt (malloc'd, owned by the session).
    char *hint_text;
    char *next_input;
    int reflows;
    int editing;
    int interrupted;
    // Whether the terminal can move the cursor up and clear to the end of the screen; without
    // that, nothing is erased and no escape sequence is written.
    int cursor_control;
    // The wait (`cle_session_wait_for_interrupt`) that was told to stop.
    atomic_uint cancelled_wait;
};

int cle_prepare_utf8_locale(void) {
    setlocale(LC_CTYPE, "");
    if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0) setlocale(LC_CTYPE, "C.UTF-8");
    return strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
}

static cle_session *cle_session_of(EditLine *editline) { return (cle_session *)cle_get_clientdata(editline); }

cle_session *cle_editline_session(EditLine *editline) { return cle_session_of(editline); }

void *cle_context(EditLine *editline) {
    cle_session *session = cle_session_of(editline);
    return session ? session->context : NULL;
}

static char *cle_prompt(EditLine *editline) {
    static char empty[] = "";
    cle_session *session = cle_session_of(editline);
    return session && session->prompt ? session->prompt : empty;
}

// The right prompt: the hint for the line as typed so far, on a terminal with cursor control.
// libedit asks for it on every full redraw, under the session lock.
static char *cle_right_prompt(EditLine *editline) {
    static char empty[] = "";
    cle_session *session = cle_session_of(editline);
    if (!session || !session->hint || !session->cursor_control) return empty;
    const LineInfo *line = el_line(editline);
    size_t length = line ? (size_t)(line->lastchar - line->buffer) : 0;
    char *typed = malloc(length + 1);
    if (!typed) return empty;
    if (length > 0) memcpy(typed, line->buffer, length);
    typed[length] = '\0';
    char *hint = session->hint(session, typed, session->context);
    free(typed);
    free(session->hint_text);
    session->hint_text = hint;
    return hint ? hint : empty;
}

static void cle_drain(int fd) {
    char buffer[64];
    while (read(fd, buffer, sizeof buffer) > 0) {
    }
}

// libedit's built-in read function blocks in read(2) with no way to be woken from another
// thread and cannot release our lock, so the session reads characters itself. It holds the
// lock while libedit works and drops it only while waiting for input.
static void cle_apply_resize(cle_session *session);

static int cle_read_char(EditLine *editline, wchar_t *character) {
    cle_session *session = cle_session_of(editline);
    char bytes[MB_LEN_MAX];
    size_t have = 0;
    int result = -1;
    *character = L'\0';
    pthread_mutex_unlock(&session->lock);
    for (;;) {
        struct pollfd fds[2] = {{session->input_fd, POLLIN, 0}, {session->wake_read, POLLIN, 0}};
        int ready = poll(fds, 2, -1);
        if (ready < 0 && errno != EINTR) break;
        if (ready > 0 && (fds[1].revents & POLLIN)) cle_drain(session->wake_read);
        if (atomic_exchange(&cle_slot_interrupt[session->slot], 0)) {
            session->interrupted = 1;
            errno = EINTR;
            break;
        }
        if (atomic_exchange(&cle_slot_resize[session->slot], 0)) {
            pthread_mutex_lock(&session->lock);
            cle_apply_resize(session);
            pthread_mutex_unlock(&session->lock);
        }
        if (ready <= 0 || !(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t count = read(session->input_fd, bytes + have, 1);
        if (count < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            break;
        }
        if (count == 0) {
            result = 0;
            break;
        }
        have += 1;
        mbstate_t state;
        memset(&state, 0, sizeof state);
        size_t decoded = mbrtowc(character, bytes, have, &state);
        if (decoded == (size_t)-2 && have < sizeof bytes) continue;
        if (decoded == (size_t)-1 || decoded == (size_t)-2) {
            // An invalid byte sequence is dropped rather than shown as garbage.
            have = 0;
            continue;
        }
        result = 1;
        break;
    }
    pthread_mutex_lock(&session->lock);
    return result;
}

// Whether the terminal description has the string capability `name` (a termcap name).
static int cle_has_string_capability(EditLine *editline, const char *name) {
    char *value = NULL;
    if (el_get(editline, EL_GETTC, name, &value, (void *)NULL) != 0) return 0;
    return value != NULL && value[0] != '\0';
}

static int cle_make_pipe(int fds[2]) {
    if (pipe(fds) != 0) return -1;
    for (int index = 0; index < 2; index++) {
        fcntl(fds[index], F_SETFD, FD_CLOEXEC);
        fcntl(fds[index], F_SETFL, fcntl(fds[index], F_GETFL) | O_NONBLOCK);
    }
    return 0;
}

static FILE *cle_open_copy(int fd, const char *mode) {
    int copy = dup(fd);
    if (copy < 0) return NULL;
    FILE *file = fdopen(copy, mode);
    if (!file) close(copy);
    return file;
}

static void cle_session_free(cle_session *session) {
    if (session->editline) el_end(session->editline);
    if (session->history) history_end(session->history);
    if (session->input) fclose(session->input);
    if (session->output) fclose(session->output);
    if (session->errors) fclose(session->errors);
    if (session->slot >= 0) cle_release_slot(session->slot);
    if (session->wake_read >= 0) close(session->wake_read);
    if (session->wake_write >= 0) close(session->wake_write);
    pthread_mutex_destroy(&session->lock);
    free(session->hint_text);
    free(session->next_input);
    free(session->prompt);
    free(session);
}

cle_session *cle_session_open(const char *program, int input_fd, int output_fd, const char *terminal_type, void *context) {
    cle_session *session = calloc(1, sizeof *session);
    if (!session) return NULL;
    session->slot = -1;
    session->reflows = -1;
    session->wake_read = -1;
    session->wake_write = -1;
    session->context = context;
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&session->lock, &attributes);
    pthread_mutexattr_destroy(&attributes);

    session->prompt = strdup("");
    session->input = cle_open_copy(input_fd, "r");
    session->output = cle_open_copy(output_fd, "w");
    session->errors = cle_open_copy(output_fd, "w");
    int wake[2];
    if (!session->prompt || !session->input || !session->output || !session->errors || cle_make_pipe(wake) != 0) {
        cle_session_free(session);
        return NULL;
    }
    session->wake_read = wake[0];
    session->wake_write = wake[1];
    session->input_fd = fileno(session->input);

    session->editline = el_init(program, session->input, session->output, session->errors);
    session->history = history_init();
    if (!session->editline || !session->history) {
        cle_session_free(session);
        return NULL;
    }
    EditLine *editline = session->editline;
    cle_set_clientdata(editline, session);
    if (terminal_type) cle_set_terminal(editline, terminal_type);
    cle_set_editor(editline, "emacs");
    cle_set_signal(editline, 0);
    cle_set_prompt(editline, cle_prompt, '\1');
    el_set(editline, EL_RPROMPT_ESC, cle_right_prompt, '\1');
    cle_set_history(editline, session->history);
    el_set(editline, EL_GETCFN, cle_read_char);
    session->cursor_control = cle_has_string_capability(editline, "up") && cle_has_string_capability(editline, "cd");

    session->slot = cle_claim_slot(session->wake_write);
    if (session->slot < 0) {
        cle_session_free(session);
        return NULL;
    }
    return session;
}

void cle_session_close(cle_session *session) {
    if (session) cle_session_free(session);
}

EditLine *cle_session_editline(cle_session *session) { return session->editline; }

History *cle_session_history(cle_session *session) { return session->history; }

void cle_session_set_prompt(cle_session *session, const char *prompt) {
    char *copy = strdup(prompt ? prompt : "");
    if (!copy) return;
    pthread_mutex_lock(&session->lock);
    free(session->prompt);
    session->prompt = copy;
    pthread_mutex_unlock(&session->lock);
}

const char *cle_session_gets(cle_session *session, int *count, int *interrupted) {
    pthread_mutex_lock(&session->lock);
    // A Ctrl-C pressed while nothing was being read must not cancel the new prompt.
    atomic_store(&cle_slot_interrupt[session->slot], 0);
    cle_drain(session->wake_read);
    session->interrupted = 0;
    // A resize while no line was edited: nothing is drawn yet, libedit only learns the size.
    if (atomic_exchange(&cle_slot_resize[session->slot], 0)) cle_apply_resize(session);
    session->editing = 1;
    // el_gets draws the prompt first and switches to raw mode only before reading the first
    // key, so keys typed in between were echoed twice (by the terminal, then by libedit) and
    // could be split between two lines. Raw mode before the prompt closes that window.
    cle_set_prepared_terminal(session->editline, 1);
    if (session->next_input) {
        el_push(session->editline, session->next_input);
        free(session->next_input);
        session->next_input = NULL;
    }
    const char *line = el_gets(session->editline, count);
    session->editing = 0;
    *interrupted = session->interrupted;
    pthread_mutex_unlock(&session->lock);
    return line;
}

void cle_session_set_next_input(cle_session *session, const char *text) {
    char *copy = text ? strdup(text) : NULL;
    pthread_mutex_lock(&session->lock);
    free(session->next_input);
    session->next_input = copy;
    pthread_mutex_unlock(&session->lock);
}

int cle_session_has_cursor_control(cle_session *session) { return session->cursor_control; }

int cle_session_wait_for_interrupt(cle_session *session, unsigned int ticket) {
    for (;;) {
        if (atomic_exchange(&cle_slot_interrupt[session->slot], 0)) {
            // The terminal echoed ^C where the cursor was; the next line printed covers it.
            pthread_mutex_lock(&session->lock);
            fputc('\r', session->output);
            fflush(session->output);
            pthread_mutex_unlock(&session->lock);
            return 1;
        }
        if (atomic_load(&session->cancelled_wait) == ticket) return 0;
        struct pollfd wake = {session->wake_read, POLLIN, 0};
        // A resize only wakes the wait: its flag stays set for the next read to apply.
        if (poll(&wake, 1, -1) > 0) cle_drain(session->wake_read);
    }
}

void cle_session_cancel_wait(cle_session *session, unsigned int ticket) {
    atomic_store(&session->cancelled_wait, ticket);
    cle_wake_slot(session->slot);
}

void cle_session_interrupt(cle_session *session) {
    atomic_store(&cle_slot_interrupt[session->slot], 1);
    cle_wake_slot(session->slot);
}

void cle_session_set_resize_handler(cle_session *session, cle_resize_function handler) {
    pthread_mutex_lock(&session->lock);
    session->on_resize = handler;
    pthread_mutex_unlock(&session->lock);
}

void cle_session_set_hint_function(cle_session *session, cle_hint_function hint) {
    pthread_mutex_lock(&session->lock);
    session->hint = hint;
    pthread_mutex_unlock(&session->lock);
}

void cle_session_set_reflow(cle_session *session, int reflows) {
    pthread_mutex_lock(&session->lock);
    session->reflows = reflows < 0 ? -1 : reflows != 0;
    pthread_mutex_unlock(&session->lock);
}

int cle_session_input_pending(cle_session *session) {
    struct pollfd input = {session->input_fd, POLLIN, 0};
    return poll(&input, 1, 0) > 0 && (input.revents & POLLIN) ? 1 : 0;
}

// MARK: - Printing while a line is edited

// Moves a simulated cursor the way libedit's refresh does: a glyph that does not fit wraps
// whole to the next row, and filling the last column moves to the next row at once.
static void cle_advance(int *column, int *row, int width, int columns) {
    if (width <= 0) return;
    if (*column + width > columns) {
        *row += 1;
        *column = 0;
    }
    *column += width;
    if (*column >= columns) {
        *row += 1;
        *column = 0;
    }
}

static int cle_glyph_width(wchar_t character, int column) {
    if (character == L'\t') return 8 - column % 8;
    if (character < 0x20 || character == 0x7f) return 2;  // shown as ^X
    int width = wcwidth(character);
    return width < 0 ? 1 : width;
}

// The row, counted from the prompt's first row, on which libedit left the cursor, had it
// drawn the prompt and the input on a terminal `columns` wide.
static int cle_cursor_row(cle_session *session, int columns) {
    int column = 0;
    int row = 0;
    const char *prompt = session->prompt;
    size_t remaining = strlen(prompt);
    int ignoring = 0;
    mbstate_t state;
    memset(&state, 0, sizeof state);
    while (remaining > 0) {
        wchar_t character;
        size_t length = mbrtowc(&character, prompt, remaining, &state);
        if (length == 0 || length == (size_t)-1 || length == (size_t)-2) {
            memset(&state, 0, sizeof state);
            length = 1;
            character = L'?';
        }
        prompt += length;
        remaining -= length;
        if (character == L'\1') {
            ignoring = !ignoring;
        } else if (ignoring) {
            continue;
        } else if (character == L'\n') {
            row += 1;
            column = 0;
        } else {
            cle_advance(&column, &row, cle_glyph_width(character, column), columns);
        }
    }
    const LineInfoW *line = el_wline(session->editline);
    for (const wchar_t *cursor = line->buffer; cursor < line->cursor; cursor++) {
        cle_advance(&column, &row, cle_glyph_width(*cursor, column), columns);
    }
    return row;
}

// Moves from the cursor to the first column of the prompt's first row and clears to the end of
// the screen, for a prompt and input drawn `rows` rows high above the cursor.
//
// A terminal without cursor control gets no escape sequence: the cursor goes to a new line
// instead, below what is on screen, and the prompt and input are drawn again there.
static void cle_move_to_edit_start(cle_session *session, int rows) {
    FILE *output = session->output;
    if (!session->cursor_control) {
        fputs("\r\n", output);
        return;
    }
    fputc('\r', output);
    if (rows > 0) fprintf(output, "\x1b[%dA", rows);
    fputs("\x1b[J", output);
}

void cle_session_clear_edit_area(cle_session *session) {
    pthread_mutex_lock(&session->lock);
    cle_move_to_edit_start(session, cle_cursor_row(session, cle_get_columns(session->editline)));
    fflush(session->output);
    pthread_mutex_unlock(&session->lock);
}

static int cle_measured_columns(cle_session *session) {
    struct winsize size;
    memset(&size, 0, sizeof size);
    if (ioctl(session->input_fd, TIOCGWINSZ, &size) != 0 || size.ws_col == 0) return 0;
    return size.ws_col;
}

// Called with the lock held, on SIGWINCH. While a line is edited, the prompt and input were
// drawn for the old width, and the terminal has already resized: a re-flowing terminal (tmux,
// VTE) re-wraps the rows they occupy, another (xterm) keeps them. When the session does not
// know which, moving up by the fewer rows of the two layouts never reaches a line above the
// prompt; at worst part of the old prompt stays on screen above the new one. Then libedit
// learns the size, the handler may replace the prompt, and both are drawn again.
static void cle_apply_resize(cle_session *session) {
    int old_columns = cle_get_columns(session->editline);
    int new_columns = cle_measured_columns(session);
    if (session->editing) {
        int kept = cle_cursor_row(session, old_columns);
        int reflowed = new_columns > 0 ? cle_cursor_row(session, new_columns) : kept;
        int rows = session->reflows == 1 ? reflowed : session->reflows == 0 ? kept : (kept < reflowed ? kept : reflowed);
        cle_move_to_edit_start(session, rows);
    }
    el_resize(session->editline);
    if (session->on_resize) session->on_resize(session, cle_get_columns(session->editline), session->context);
    if (session->editing) cle_refresh(session->editline);
    fflush(session->output);
}

void cle_session_print_async(cle_session *session, const char *text, size_t length) {
    if (length == 0) return;
    pthread_mutex_lock(&session->lock);
    FILE *output = session->output;
    if (!session->editing) {
        fwrite(text, 1, length, output);
        fflush(output);
        pthread_mutex_unlock(&session->lock);
        return;
    }
    // A resize the reading thread has not handled yet: the prompt on screen is laid out for
    // the old width, so adopt the new one first, or the rows below would be miscounted.
    if (atomic_exchange(&cle_slot_resize[session->slot], 0)) cle_apply_resize(session);
    cle_move_to_edit_start(session, cle_cursor_row(session, cle_get_columns(session->editline)));
    // The terminal is in libedit's raw mode, so each newline gets its carriage return here.
    for (size_t index = 0; index < length; index++) {
        if (text[index] == '\n' && (index == 0 || text[index - 1] != '\r')) fputc('\r', output);
        fputc(text[index], output);
    }
    if (text[length - 1] != '\n') fputs("\r\n", output);
    fflush(output);
    cle_refresh(session->editline);
    pthread_mutex_unlock(&session->lock);
}
