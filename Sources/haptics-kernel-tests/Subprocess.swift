// Runs another program (evtest, fftest, the haptics CLI) with its stdin and merged stdout/stderr on pipes.
// Every wait has a deadline: a hung child is killed, never waited on forever.
import CLinuxInput
import Glibc

final class Subprocess {
    let pid: pid_t
    let command: String
    private var input: Int32
    private let output: Int32
    private(set) var collected: [UInt8] = []
    private var exited: Int32?

    /// Starts `arguments[0]` (searched on PATH unless it has a slash).
    init(_ arguments: [String]) throws {
        command = arguments.joined(separator: " ")
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        guard cli_pipe2(&inputPipe, O_CLOEXEC) == 0, cli_pipe2(&outputPipe, O_CLOEXEC) == 0 else {
            throw TestFailure(reason: "pipe2 failed: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], STDERR_FILENO)
        // The runner ignores SIGPIPE; children get the default back.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawnp(&child, arguments[0], &actions, &attributes, &argv, Glibc.environ)
        close(inputPipe[0])
        close(outputPipe[1])
        guard status == 0 else {
            close(inputPipe[1])
            close(outputPipe[0])
            throw TestFailure(reason: "cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        pid = child
        input = inputPipe[1]
        output = outputPipe[0]
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

    var text: String { String(decoding: collected, as: UTF8.self) }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
    }

    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Reads output until `predicate` holds for everything read so far, end of output, or the deadline.
    /// Returns whether the predicate held.
    @discardableResult
    func read(until predicate: (String) -> Bool, timeout: Double) -> Bool {
        let deadline = monotonicSeconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !predicate(text) {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return false }
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 1, Int32(remaining * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return false }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return predicate(text) }
            collected += buffer.prefix(count)
        }
        return true
    }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Reads to end of output and reaps the child; kills it when the deadline passes first.
    /// Returns the exit status, or 128 + the signal number when a signal ended it.
    func finish(timeout: Double) -> Int32 {
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
func projectBinary(_ name: String) -> String {
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
func onPath(_ name: String) -> Bool {
    let path = String(cString: getenv("PATH") ?? strdup("/usr/bin:/bin"))
    return path.split(separator: ":").contains { access("\($0)/\(name)", X_OK) == 0 }
}
