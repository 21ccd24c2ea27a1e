import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Spawning processes with `posix_spawn`: each figure runs in a fresh copy of the bench, and
/// figure 7 spawns the REPL.
enum Subprocess {
    /// Where a child's standard output goes.
    enum Output {
        case discard
        /// A pipe the caller reads from; its read end is returned.
        case pipe
    }

    struct Child {
        let pid: pid_t
        /// The read end of the child's stdout pipe, with `.pipe`.
        let output: Int32?
    }

    struct Exit {
        /// The exit status, or 128 + the signal number.
        let status: Int32
        /// Peak resident set size in bytes (`ru_maxrss`).
        let peakResident: Int
    }

    /// The path of the running executable.
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts `path` with `input` written to its stdin (a pipe, then closed) and stderr
    /// inherited. Returns `nil` if it could not be started; `errno` says why.
    static func spawn(_ path: String, arguments: [String], input: String = "", output: Output) -> Child? {
        var stdinPipe: [Int32] = [0, 0]
        guard pipe(&stdinPipe) == 0 else { return nil }
        var stdoutPipe: [Int32] = [-1, -1]
        if case .pipe = output, pipe(&stdoutPipe) != 0 {
            close(stdinPipe[0])
            close(stdinPipe[1])
            return nil
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], STDIN_FILENO)
        posix_spawn_file_actions_addclose(&actions, stdinPipe[0])
        posix_spawn_file_actions_addclose(&actions, stdinPipe[1])
        switch output {
        case .discard:
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        case .pipe:
            posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], STDOUT_FILENO)
            posix_spawn_file_actions_addclose(&actions, stdoutPipe[0])
            posix_spawn_file_actions_addclose(&actions, stdoutPipe[1])
        }

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(stdinPipe[0])
        if stdoutPipe[1] >= 0 { close(stdoutPipe[1]) }
        guard spawned == 0 else {
            close(stdinPipe[1])
            if stdoutPipe[0] >= 0 { close(stdoutPipe[0]) }
            errno = spawned
            return nil
        }
        let bytes = Array(input.utf8)
        if !bytes.isEmpty { _ = bytes.withUnsafeBytes { write(stdinPipe[1], $0.baseAddress, $0.count) } }
        close(stdinPipe[1])
        return Child(pid: pid, output: stdoutPipe[0] >= 0 ? stdoutPipe[0] : nil)
    }

    /// Reads the child's output line by line until end of file, then closes it.
    static func readLines(_ fd: Int32, _ body: (String) -> Void) {
        defer { close(fd) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending += chunk[..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                body(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
        if !pending.isEmpty { body(String(decoding: pending, as: UTF8.self)) }
    }

    /// Waits for the child to end and reaps it.
    static func wait(_ child: Child) -> Exit {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child.pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Exit(status: exitStatus, peakResident: usage.ru_maxrss * 1024)
    }
}
