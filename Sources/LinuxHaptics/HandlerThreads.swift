// The threads inside an engine's stopped or reset handler now, across every engine of the process. A stop waits
// for the handlers of its engine that began before it, so that none runs once it returns; but a stop made from
// within a handler waits for none, since two handlers stopping each other's engines would otherwise wait for
// each other for ever.
@_spi(Internals) import LinuxSystem

enum HandlerThreads {
    /// Each thread inside a handler, with how deep (a handler may cause another on its thread).
    private static let inside = Lock<[UInt: Int]>([:])

    /// Runs `handler` with the calling thread counted as inside one.
    static func run(_ handler: () -> Void) {
        let thread = ServiceThread.currentID
        inside.withLock { $0[thread, default: 0] += 1 }
        defer {
            inside.withLock { threads in
                threads[thread, default: 1] -= 1
                if threads[thread] == 0 { threads[thread] = nil }
            }
        }
        handler()
    }

    /// Whether the calling thread is inside a handler of any engine.
    static var currentIsInside: Bool { inside.withLock { $0[ServiceThread.currentID] != nil } }
}
