// Runs another program (evtest, fftest, the haptics CLI, a peer library's harness) with its stdin on a pipe and
// its merged stdout/stderr on a pipe or a pseudo-terminal. Every wait has a deadline: a hung child is killed.
internal import CLinuxInput
import Glibc
import LinuxInput

/// Why a child program could not be started.
package struct SubprocessError: Error, CustomStringConvertible {
    package let reason: String
    package var description: String { reason }
}

package final class Subprocess {
    package let pid: Int32
    package let command: String
    private var input: Int32
    private let output: Int32
    package private(set) var collected: [UInt8] = []
    private var exited: Int32?

    /// Starts `arguments[0]` (searched on PATH unless it has a slash). With `terminal`, the child's output
    /// goes to a pseudo-terminal: stdio then flushes each line, which a program that never exits by itself
    /// (evtest) needs for its output to be readable while it runs.
    package init(_ arguments: [String], terminal: Bool = false) throws {
        command = arguments.joined(separator: " ")
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        guard cli_pipe2(&inputPipe, O_CLOEXEC) == 0 else {
            throw SubprocessError(reason: "pipe2 failed: \(String(cString: strerror(errno)))")
        }
        if terminal {
            outputPipe = try Self.openPseudoTerminal()
        } else if cli_pipe2(&outputPipe, O_CLOEXEC) != 0 {
            throw SubprocessError(reason: "pipe2 failed: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], STDERR_FILENO)
        // The runner ignores SIGPIPE, and the concurrency pool's threads block signals; a child inherits
        // both, and a blocked SIGTERM would never stop it. Children get default dispositions, nothing blocked.
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
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, arguments[0], &actions, &attributes, &argv, Glibc.environ)
        close(inputPipe[0])
        close(outputPipe[1])
        guard status == 0 else {
            close(inputPipe[1])
            close(outputPipe[0])
            throw SubprocessError(reason: "cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        pid = child
        input = inputPipe[1]
        output = outputPipe[0]
    }

    /// `TIOCSPTLCK` and `TIOCGPTN` from asm-generic/ioctls.h (`_IOW('T', 0x31, int)`, `_IOR('T', 0x30,
    /// unsigned int)`): Swift cannot import those macros, and posix_openpt/grantpt/unlockpt/ptsname are
    /// hidden from Swift's Glibc module (they need _XOPEN_SOURCE), so the pseudo-terminal is opened by hand.
    private static let setPseudoTerminalLock: UInt = 0x4004_5431
    private static let getPseudoTerminalNumber: UInt = 0x8004_5430

    /// A pseudo-terminal as [read end (controller), write end (the child's terminal)], both close-on-exec.
    private static func openPseudoTerminal() throws -> [Int32] {
        let controller = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard controller >= 0, cli_ioctl_ptr(controller, setPseudoTerminalLock, &unlock) == 0,
            cli_ioctl_ptr(controller, getPseudoTerminalNumber, &number) == 0
        else {
            throw SubprocessError(reason: "no pseudo-terminal (/dev/ptmx): \(String(cString: strerror(errno)))")
        }
        let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { throw SubprocessError(reason: "cannot open /dev/pts/\(number)") }
        return [controller, terminal]
    }

    deinit {
        if exited == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        if input >= 0 { close(input) }
        close(output)
    }

    package var text: String { String(decoding: collected, as: UTF8.self) }

    package func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
    }

    package func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Reads output until `predicate` holds for everything read so far, end of output, or the deadline.
    /// Returns whether the predicate held.
    @discardableResult
    package func read(until predicate: (String) -> Bool, timeout: Double) -> Bool {
        let deadline = (Double(Sys.monotonicNanoseconds()) / 1e9) + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !predicate(text) {
            let remaining = deadline - (Double(Sys.monotonicNanoseconds()) / 1e9)
            if remaining <= 0 { return false }
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 1, Int32(remaining * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return false }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            // A pseudo-terminal reports EIO once the child has closed it: the end of output, like 0 on a pipe.
            if count <= 0 { return predicate(text) }
            collected += buffer.prefix(count)
        }
        return true
    }

    package func signal(_ number: Int32) { kill(pid, number) }

    /// Reads to end of output and reaps the child; kills it when the deadline passes first.
    /// Returns the exit status, or 128 + the signal number when a signal ended it.
    package func finish(timeout: Double) -> Int32 {
        if let exited { return exited }
        let reachedEnd = read(until: { _ in false }, timeout: timeout)
        _ = reachedEnd
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == 0 {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exited = code
        return code
    }
}

/// Where a project binary is: next to this runner (the build folder, or /usr/local/bin in the VM), else PATH.
package func projectBinary(_ name: String) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if length > 0 {
        let path = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let slash = path.lastIndex(of: "/") {
            let sibling = String(path[..<slash]) + "/" + name
            if access(sibling, X_OK) == 0 { return sibling }
        }
    }
    return name
}

/// True when `name` is an executable on PATH.
package func onPath(_ name: String) -> Bool {
    let path = String(cString: getenv("PATH") ?? strdup("/usr/bin:/bin"))
    return path.split(separator: ":").contains { access("\($0)/\(name)", X_OK) == 0 }
}
