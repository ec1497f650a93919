// The threads inside an engine's stopped or reset handler now, across every engine of the process. A stop waits
// for the handlers of its engine that began before it, so that none runs once it returns; but a stop made from
// within a handler waits for none, since two handlers stopping each other's engines would otherwise wait for
// each other for ever.
@_spi(Internals) import LinuxSystem

enum HandlerThreads {
    private static let inside = ThreadDepths()

    /// Runs `handler` with the calling thread counted as inside one.
    static func run(_ handler: () -> Void) { inside.run(handler) }

    /// Whether the calling thread is inside a handler of any engine.
    static var currentIsInside: Bool { inside.containsCurrent }
}
