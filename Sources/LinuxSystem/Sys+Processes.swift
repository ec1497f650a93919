// Child processes: started with `posix_spawnp`, signalled, reaped; and what a process knows of itself (its
// executable's path, its environment). For the test devices' subprocess runner and the benches. The silence
// guard's fork is in Sys+SilenceGuard.swift.
package import Glibc

extension Sys {
    /// The corresponding C function is `posix_spawnp`: starts `arguments[0]` (searched on PATH unless it has a
    /// slash) with `input` as its stdin and `output` as both its stdout and stderr. The child gets SIGPIPE's
    /// default disposition and no blocked signals: the caller may ignore SIGPIPE, and the concurrency pool's
    /// threads block signals, which a child would otherwise inherit (a blocked SIGTERM would never stop it).
    /// `environment` entries (`NAME=value`) are added to this process's; with `newProcessGroup` the child leads a
    /// process group of its own, which a test can stop or kill whole as a terminal's job control would.
    package static func spawn(
        _ arguments: [String], input: Int32, output: Int32, environment: [String] = [], newProcessGroup: Bool = false
    ) throws(SystemCallError) -> pid_t {
        while let injected = SyscallFaults.injected(at: { "posix_spawnp" }) {
            if injected != .interrupted { throw SystemCallError(injected, call: "posix_spawnp(\(arguments[0]))") }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, output, STDERR_FILENO)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let status: Int32
        if environment.isEmpty {
            status = posix_spawnp(&child, arguments[0], &actions, &attributes, &argv, Glibc.environ)
        } else {
            var inherited: [UnsafeMutablePointer<CChar>?] = []
            var entry = Glibc.environ
            while let variable = entry.pointee {
                inherited.append(variable)
                entry += 1
            }
            let added: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) }
            defer { added.forEach { free($0) } }
            var envp = inherited + added + [nil]
            status = posix_spawnp(&child, arguments[0], &actions, &attributes, &argv, &envp)
        }
        guard status == 0 else { throw SystemCallError(Errno(rawValue: status), call: "posix_spawnp(\(arguments[0]))") }
        return child
    }

    /// The corresponding C function is `kill`.
    package static func kill(_ pid: pid_t, _ signal: Int32) {
        _ = Glibc.kill(pid, signal)
    }

    /// The corresponding C function is `waitpid`: the child's wait status once it has ended, waiting for that
    /// unless `block` is false (then nil while it runs).
    package static func waitForExit(_ pid: pid_t, block: Bool = true) -> Int32? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, block ? 0 : WNOHANG)
            if result == -1 && errno == EINTR { continue }
            return result == pid ? status : nil
        }
    }

    /// A child process, as `waitpid` with `WNOHANG` finds it.
    package enum ChildState: Equatable, Sendable {
        case running
        /// Ended and now reaped, with its wait status.
        case reaped(Int32)
        /// Not a child of this process, or reaped already (`ECHILD`): its id may be another process's by now.
        case notAChild
    }

    /// The corresponding C function is `waitpid` with `WNOHANG`: reaps `pid` if it has ended, never waits.
    package static func childState(_ pid: pid_t) -> ChildState {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == -1 && errno == EINTR { continue }
            if result == pid { return .reaped(status) }
            return result == 0 ? .running : .notAChild
        }
    }

    /// The corresponding C function is `readlink`: where a symbolic link points.
    package static func readLink(_ path: String) throws(SystemCallError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = try valueOrErrno("readlink(\(path))") { Glibc.readlink(path, &buffer, buffer.count - 1) }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The corresponding C function is `getenv`.
    package static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

extension Sys {
    /// The corresponding C function is `getpid`.
    package static var processID: pid_t { getpid() }

    /// The corresponding C function is `isatty`: whether `fd` is a terminal.
    package static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// The corresponding C call is `ioctl(TIOCGWINSZ)`: the width in columns of the terminal `fd` is; nil when
    /// `fd` is no terminal, or one that does not know its size (0, as a pseudo-terminal nobody sized says).
    package static func terminalColumns(_ fd: Int32) -> Int? {
        var size = winsize()
        guard (try? ioctl(fd, UInt(TIOCGWINSZ), "TIOCGWINSZ", &size)) != nil, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The corresponding C function is `fflush(NULL)`: every stdio output stream written out (what `print`
    /// buffered), before another writer (a child, a raw `write`) adds to the same file.
    package static func flushStandardStreams() { fflush(nil) }
}
