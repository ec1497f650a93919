// The threads that serve a test device, stopped and joined exactly once whoever asks first (`destroy()`,
// deinit, a signal handler's path).
internal import Glibc
import LinuxInput
@_spi(Internals) import LinuxSystem

final class ServingThreads: Sendable {
    private let handles: Lock<[pthread_t]>

    /// Starts one joinable thread per body; when one cannot be started, `stop` runs and the started ones are
    /// joined before the error is thrown.
    init(_ bodies: [@Sendable () -> Void], stop: () -> Void) throws(SystemCallError) {
        var started: [pthread_t] = []
        for body in bodies {
            do {
                // A serving thread stands in for the kernel's side: a fault a test injects is meant for the code
                // under test, never for the device it talks to.
                started.append(try Sys.startJoinableThread { SyscallFaults.exempting(body) })
            } catch {
                stop()
                started.forEach(Sys.joinThread)
                throw error
            }
        }
        handles = Lock(started)
    }

    /// Runs `stop` (which must make every thread return) and joins them, the first time only; returns whether
    /// this call did it.
    @discardableResult
    func stopAndJoin(_ stop: () -> Void) -> Bool {
        let running = handles.withLock { handles -> [pthread_t] in
            defer { handles = [] }
            return handles
        }
        guard !running.isEmpty else { return false }
        stop()
        running.forEach(Sys.joinThread)
        return true
    }
}
