// How many times the repetition tests unplug and plug back in: a few times under `make test`, which proves each
// path and what it leaves behind, and the full counts under `make test-long` (the runner's --long), which looks
// for what only builds up over many cycles. The counts are printed with each test's result.
import Synchronization

enum Repetitions {
    private static let long = Atomic<Bool>(false)

    /// Chooses the full counts; the runner calls it before the first test.
    static func chooseLong() { long.store(true, ordering: .relaxed) }

    static var isLong: Bool { long.load(ordering: .relaxed) }

    /// Unplug-replug cycles on an emulated controller (its real driver bound each time: about 0.3 to 0.8 s a cycle
    /// under emulation).
    static var controllerCycles: Int { isLong ? 20 : 4 }

    /// Unplug-replug cycles on the virtual pad (about 0.06 s a cycle under emulation).
    static var virtualPadCycles: Int { isLong ? 100 : 25 }
}
