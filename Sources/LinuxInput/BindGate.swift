// When a hot-plugged event node may be opened. A driver registers its input device inside its probe and may
// finish setting it up after that: 6.1's hid-microsoft registers the Xbox pad's input device, then marks
// `EV_FF` on it, then allocates the force-feedback state, and only then returns from its probe; an
// `EVIOCGEFFECTS` in between makes the kernel dereference NULL. The driver core sends the device's `bind`
// uevent after the probe returned, on the same netlink socket as the node's `add` and after it. So a node
// whose parent (a HID device or a USB interface) is still binding waits here for that parent's `bind`.
// Pure: the monitor feeds it the events in the order the socket delivered them and does what it answers.

/// The nodes that wait for their parent's driver to finish binding, and what is known of those parents.
struct BindGate: Sendable {
    /// The subsystems of the parents a node waits for: HID drivers and USB interface drivers (xpad) register
    /// their input devices inside their probe.
    static let parentSubsystems: Set<String> = ["hid", "usb"]

    /// How long a node waits for its parent's `bind` before it is opened anyway. A probe that fails removes
    /// its nodes, so only a lost uevent (a full socket buffer) leaves a node waiting this long; probes that
    /// talk to the device (a Switch Pro Controller's handshake) take about a second.
    static let hangNanoseconds: UInt64 = 10_000_000_000

    /// What a parent's events said last: it was added or unbound and has not bound since, or it bound.
    enum ParentState: Hashable, Sendable {
        case binding, bound
    }

    /// The parent of a new node (the device above its `inputN`) as sysfs shows it when the node's `add` is
    /// handled.
    struct Parent: Hashable, Sendable {
        var syspath: String
        var subsystem: String
        /// sysfs has its `driver` link. The driver core makes that link before it calls the driver's probe, so
        /// the link alone does not say that the probe returned.
        var hasDriverLink: Bool
    }

    /// What to do with a node that was just added.
    enum Decision: Hashable, Sendable {
        /// Its parent has bound (or it has none that binds): open it now.
        case openNow
        /// Its parent is still binding: open it when the parent's `bind` arrives, or at the deadline.
        case waitForBind(parent: String)
    }

    private struct Waiting: Hashable, Sendable {
        var parent: String
        var deadline: UInt64
        /// Arrival order, so released nodes are announced in the order they were added.
        var order: Int
    }

    /// Parents seen through their events since the monitor opened its socket, by sysfs path.
    private(set) var parents: [String: ParentState] = [:]
    private var waiting: [String: Waiting] = [:]
    private var arrivals = 0

    /// Decides for the node `sysName` (`event5`) just added below `parent` (nil when its input device has no
    /// parent device, as uinput's have). A parent whose `add` or `unbind` was seen waits for its `bind`. A
    /// parent with no event seen since the socket opened was there before: without a `driver` link it has not
    /// started binding, so the node waits; with one it is taken as bound. That leaves one window: a parent
    /// whose probe started before the monitor opened its socket and is still running.
    mutating func nodeAdded(_ sysName: String, parent: Parent?, now: UInt64) -> Decision {
        guard let parent, Self.parentSubsystems.contains(parent.subsystem) else { return .openNow }
        switch parents[parent.syspath] {
        case .bound: return .openNow
        case .binding: break
        case nil: if parent.hasDriverLink { return .openNow }
        }
        arrivals += 1
        waiting[sysName] = Waiting(parent: parent.syspath, deadline: now + Self.hangNanoseconds, order: arrivals)
        return .waitForBind(parent: parent.syspath)
    }

    /// The nodes that wait for their parent.
    var waitingNodes: [String] { Array(waiting.keys) }

    /// Whether the node waits for its parent (its `change` events are then moot: it is probed when released).
    func isWaiting(_ sysName: String) -> Bool { waiting[sysName] != nil }

    /// Forgets a node that went away; true when it was waiting, so the gate never released it (a node the monitor
    /// knew before it waited was told all the same, and its removal is the monitor's to tell).
    mutating func nodeRemoved(_ sysName: String) -> Bool {
        waiting.removeValue(forKey: sysName) != nil
    }

    /// Takes one event of a parent (`add`, `bind`, `unbind`, `remove`...) and returns the nodes its `bind`
    /// releases, in the order they were added.
    mutating func parentEvent(action: String, syspath: String) -> [String] {
        switch action {
        case "add", "unbind":
            parents[syspath] = .binding
        case "bind":
            parents[syspath] = .bound
            return release { $0.parent == syspath }
        case "remove":
            parents[syspath] = nil
            // Its nodes went before it; any still listed are dropped with it.
            waiting = waiting.filter { $0.value.parent != syspath }
        default:
            break
        }
        return []
    }

    /// The nodes whose wait reached its deadline at `now`, in the order they were added: they are opened
    /// without their parent's `bind`.
    mutating func expired(now: UInt64) -> [String] {
        release { $0.deadline <= now }
    }

    /// The earliest deadline of a waiting node; nil when none waits.
    var nextDeadline: UInt64? { waiting.values.map(\.deadline).min() }

    private mutating func release(where isReleased: (Waiting) -> Bool) -> [String] {
        let released = waiting.filter { isReleased($0.value) }.sorted { $0.value.order < $1.value.order }
        for (sysName, _) in released { waiting[sysName] = nil }
        return released.map(\.key)
    }
}
