// Threads that outlive a call.
internal import Glibc

/// A joinable thread for services that outlive a call (the engine's playback thread).
package struct ServiceThread: Sendable {
    private let handle: pthread_t

    /// The corresponding C function is `pthread_create`.
    package static func start(_ body: @escaping @Sendable () -> Void) throws(SystemCallError) -> ServiceThread {
        ServiceThread(handle: try Sys.startJoinableThread(body))
    }

    /// The corresponding C function is `pthread_join`.
    package func join() { Sys.joinThread(handle) }

    /// The corresponding C function is `pthread_detach`: for a thread that ends by itself, unjoined.
    package func detach() { _ = pthread_detach(handle) }

    /// Whether the caller is this thread (`pthread_equal(pthread_self())`): joining oneself would deadlock.
    package var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// The calling thread's id (`pthread_self()`), unique among the threads alive at the same time; any thread,
    /// not only a service thread.
    package static var currentID: UInt { UInt(pthread_self()) }
}

extension Lock where Value == ServiceThread? {
    /// Takes the thread held here and waits for it to end, so that a second call does nothing; when the caller
    /// is that thread (a stream closed from its own thread, which then ends by itself), detaches it instead, so
    /// that its end frees it with no join.
    package func joinUnlessCurrent() {
        let taken = withLock { held -> ServiceThread? in
            defer { held = nil }
            return held
        }
        guard let taken else { return }
        if taken.isCurrent { taken.detach() } else { taken.join() }
    }
}
