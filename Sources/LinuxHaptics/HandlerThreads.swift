// The threads inside an engine's callback now (a stopped or reset handler, a completion), across every engine of
// the process. A stop waits for the stopped and reset handlers of its engine that began before it, so that none
// runs once it returns; but a stop made from within a callback waits for none: two handlers stopping each
// other's engines would otherwise wait for each other for ever, a completion called on the way to its thread's
// own stopped handler would wait for that handler, and one on the playback thread for a handler whose stop is
// joining that thread.
@_spi(Internals) import LinuxSystem

enum HandlerThreads {
    private static let inside = ThreadDepths()

    /// Runs `handler` (or a run of completions) with the calling thread counted as inside the engine's callbacks.
    static func run(_ handler: () -> Void) { inside.run(handler) }

    /// Whether the calling thread is inside a callback of any engine.
    static var currentIsInside: Bool { inside.containsCurrent }
}
