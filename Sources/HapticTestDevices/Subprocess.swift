// Runs another program (evtest, fftest, the haptics CLI, a peer library's harness) with its stdin on a pipe and
// its merged stdout/stderr on a pipe or a pseudo-terminal. Every wait has a deadline: a hung child is killed.
internal import Glibc
@_spi(Internals) import LinuxSystem

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
        do throws(SystemCallError) {
            let inputPipe = try Sys.pipe(blocking: true)
            let outputPipe: (read: Int32, write: Int32)
            do throws(SystemCallError) {
                outputPipe = terminal ? try Self.openPseudoTerminal() : try Sys.pipe(blocking: true)
            } catch {
                Sys.close(inputPipe.read)
                Sys.close(inputPipe.write)
                throw error
            }
            defer {
                Sys.close(inputPipe.read)
                Sys.close(outputPipe.write)
            }
            do throws(SystemCallError) {
                pid = try Sys.spawn(arguments, input: inputPipe.read, output: outputPipe.write)
            } catch {
                Sys.close(inputPipe.write)
                Sys.close(outputPipe.read)
                throw error
            }
            input = inputPipe.write
            output = outputPipe.read
        } catch {
            throw SubprocessError(reason: "cannot start \(arguments[0]): \(error)")
        }
    }

    /// `TIOCSPTLCK` and `TIOCGPTN` from asm-generic/ioctls.h (`_IOW('T', 0x31, int)`, `_IOR('T', 0x30,
    /// unsigned int)`): Swift cannot import those macros, and posix_openpt/grantpt/unlockpt/ptsname are
    /// hidden from Swift's Glibc module (they need _XOPEN_SOURCE), so the pseudo-terminal is opened by hand.
    private static let setPseudoTerminalLock: UInt = 0x4004_5431
    private static let getPseudoTerminalNumber: UInt = 0x8004_5430

    /// A pseudo-terminal: its controller to read, and the terminal the child writes to; both close-on-exec.
    private static func openPseudoTerminal() throws(SystemCallError) -> (read: Int32, write: Int32) {
        let controller = try Sys.open("/dev/ptmx", flags: O_RDWR | O_NOCTTY)
        do throws(SystemCallError) {
            var unlock: Int32 = 0
            var number: UInt32 = 0
            _ = try Sys.ioctl(controller, setPseudoTerminalLock, "TIOCSPTLCK", &unlock)
            _ = try Sys.ioctl(controller, getPseudoTerminalNumber, "TIOCGPTN", &number)
            return (controller, try Sys.open("/dev/pts/\(number)", flags: O_RDWR | O_NOCTTY))
        } catch {
            Sys.close(controller)
            throw error
        }
    }

    deinit {
        if exited == nil {
            Sys.kill(pid, SIGKILL)
            _ = Sys.waitForExit(pid)
        }
        if input >= 0 { Sys.close(input) }
        Sys.close(output)
    }

    package var text: String { String(decoding: collected, as: UTF8.self) }

    package func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { buffer in Result { () throws(SystemCallError) in try Sys.write(input, buffer) } }
    }

    package func closeInput() {
        if input >= 0 { Sys.close(input) }
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
            guard let ready = try? Sys.poll(&fds, timeout: Int32(remaining * 1000) + 1), ready > 0 else { return false }
            let count = buffer.withUnsafeMutableBytes { (bytes) -> Int in (try? Sys.read(output, into: bytes)) ?? -1 }
            // A pseudo-terminal reports EIO once the child has closed it: the end of output, like 0 on a pipe.
            if count <= 0 { return predicate(text) }
            collected += buffer.prefix(count)
        }
        return true
    }

    package func signal(_ number: Int32) { Sys.kill(pid, number) }

    /// Reads to end of output and reaps the child; kills it when the deadline passes first.
    /// Returns the exit status, or 128 + the signal number when a signal ended it.
    package func finish(timeout: Double) -> Int32 {
        if let exited { return exited }
        let reachedEnd = read(until: { _ in false }, timeout: timeout)
        _ = reachedEnd
        var waited = Sys.waitForExit(pid, block: false)
        if waited == nil {
            Sys.kill(pid, SIGKILL)
            waited = Sys.waitForExit(pid)
        }
        let status = waited ?? 0
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exited = code
        return code
    }
}

/// Where a project binary is: next to this runner (the build folder, or /usr/local/bin in the VM), else PATH.
package func projectBinary(_ name: String) -> String {
    if let path = try? Sys.readLink("/proc/self/exe"), let slash = path.lastIndex(of: "/") {
        let sibling = String(path[..<slash]) + "/" + name
        if Sys.access(sibling, X_OK) { return sibling }
    }
    return name
}

/// True when `name` is an executable on PATH.
package func onPath(_ name: String) -> Bool {
    let path = Sys.environment("PATH") ?? "/usr/bin:/bin"
    return path.split(separator: ":").contains { Sys.access("\($0)/\(name)", X_OK) }
}
