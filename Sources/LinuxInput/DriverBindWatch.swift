// The kernel's `bind` uevents of HID devices and USB devices, heard by a process that creates a device (an
// emulated controller) and must not open its nodes before the driver's probe returned. The driver core sends
// `bind` after the probe; sysfs has no such mark (the `driver` link exists before the probe starts).
internal import Glibc
@_spi(Internals) package import LinuxSystem

/// Listens to the kernel's uevent broadcasts for `bind` events of HID and USB devices. Open it before the
/// device is created, so its `bind` cannot come before the socket. Used by one thread at a time.
package final class DriverBindWatch {
    private let context: UdevContext
    private let monitor: UdevMonitor
    /// Every bind heard so far, in order: subsystem and sysfs name (`0005:045E:0B13.0001`, `1-1:1.0`).
    private var heard: [(subsystem: String, sysName: String)] = []

    /// Opens the socket on the kernel's group, which works with or without a udev daemon (in the initial
    /// network namespace; a container's hears nothing).
    package init() throws(SystemCallError) {
        context = try UdevContext()
        monitor = try UdevMonitor(context: context, group: .kernel, subsystems: BindGate.parentSubsystems.sorted())
        // Without the room (a process that may not force it), a burst may drop a bind, as below.
        try? monitor.setReceiveBufferSize(UdevMonitor.burstBufferBytes)
    }

    /// Reads every event waiting on the socket (it never blocks).
    package func drain() {
        while true {
            switch monitor.receive() {
            case .device(let device):
                if device.action == "bind", let subsystem = device.subsystem {
                    heard.append((subsystem, device.sysName))
                }
            case .overflowed:
                // Events were dropped: a bind among them is never heard, and whoever waits for it waits until its
                // own deadline. The events after the overflow are read on.
                continue
            case .nothing, .failed:
                return
            }
        }
    }

    /// Whether the last `drain()` or an earlier one read a `bind` of the device named `sysName`.
    package func heardBind(of sysName: String) -> Bool {
        heard.contains { $0.sysName == sysName }
    }

    /// Sleeps until an event waits on the socket or `deadline` (monotonic nanoseconds) passes.
    package func waitForEvents(until deadline: UInt64) {
        let now = Sys.monotonicNanoseconds()
        guard now < deadline else { return }
        var fds = [pollfd(fd: monitor.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        _ = try? Sys.poll(&fds, timeout: Int32(clamping: (deadline - now + 999_999) / 1_000_000))
    }
}
