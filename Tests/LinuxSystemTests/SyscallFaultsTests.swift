// The fault-injection hook every system call passes through: which call of a site fails, that an interrupted
// call is made again, that exempt threads are left alone, and what the tally counts. The calls here are to a
// site of their own, so other tests running meanwhile are never failed; the suite is serialized because the
// plan is process-wide.
import Testing

@_spi(Internals) @testable import LinuxSystem

@Suite(.serialized)
struct SyscallFaultsTests {
    static let site = "fault-test-site"

    /// One call to the test's own site: the body's result, or the error the hook made.
    func call(retrying: Bool = true, _ bodyRuns: inout Int) -> Result<Int32, SystemCallError> {
        var runs = bodyRuns
        defer { bodyRuns = runs }
        return Result { () throws(SystemCallError) in
            try valueOrErrno("\(Self.site)(/some/path)", retryOnInterrupt: retrying) {
                runs += 1
                return Int32(7)
            }
        }
    }

    @Test func theNthCallAloneFailsWithTheErrnoAndNamesTheCall() throws {
        SyscallFaults.arm(.init(site: Self.site, errno: .ioError, calls: .nth(2)))
        defer { SyscallFaults.disarm() }
        var runs = 0
        #expect(try call(&runs).get() == 7)
        #expect(throws: SystemCallError(.ioError, call: "\(Self.site)(/some/path)")) { try call(&runs).get() }
        #expect(try call(&runs).get() == 7)
        #expect(runs == 2, "a failed call never reaches the system")
        let tally = SyscallFaults.disarm()
        #expect(tally.calls[Self.site] == 3)
        #expect(tally.injected == 1)
    }

    @Test func everyCallFromTheNthFails() throws {
        SyscallFaults.arm(.init(site: Self.site, errno: .noDevice, calls: .from(2)))
        defer { SyscallFaults.disarm() }
        var runs = 0
        #expect(throws: Never.self) { try call(&runs).get() }
        for _ in 0..<3 {
            #expect(throws: SystemCallError(.noDevice, call: "\(Self.site)(/some/path)")) { try call(&runs).get() }
        }
        #expect(SyscallFaults.disarm().injected == 3)
    }

    @Test func aPlanMatchingAPathCountsAndFailsOnlyTheCallsOfThatPath() throws {
        SyscallFaults.arm(.init(site: Self.site, errno: .ioError, calls: .nth(2), matching: "/b"))
        defer { SyscallFaults.disarm() }
        let call = { (path: String) in
            Result { () throws(SystemCallError) in try valueOrErrno("\(Self.site)(\(path))") { Int32(7) } }
        }
        #expect(throws: Never.self) { try call("/a").get() }
        #expect(throws: Never.self) { try call("/b").get() }
        #expect(throws: Never.self) { try call("/a").get() }
        #expect(throws: SystemCallError(.ioError, call: "\(Self.site)(/b)")) { try call("/b").get() }
        #expect(throws: Never.self) { try call("/b").get() }
        let tally = SyscallFaults.disarm()
        #expect(tally.calls[Self.site] == 5, "the tally still counts every call of the site")
        #expect(tally.injected == 1)
    }

    @Test func anInterruptedCallIsMadeAgainUnlessTheCallerWantsTheInterruption() throws {
        SyscallFaults.arm(.init(site: Self.site, errno: .interrupted, calls: .nth(1)))
        var runs = 0
        #expect(try call(&runs).get() == 7)
        #expect(runs == 1)
        #expect(SyscallFaults.disarm().calls[Self.site] == 2, "the retry is a call of its own")

        SyscallFaults.arm(.init(site: Self.site, errno: .interrupted, calls: .nth(1)))
        defer { SyscallFaults.disarm() }
        #expect(throws: SystemCallError(.interrupted, call: "\(Self.site)(/some/path)")) {
            try call(retrying: false, &runs).get()
        }
    }

    @Test func anExemptThreadIsNeitherFailedNorCounted() throws {
        SyscallFaults.arm(.init(site: Self.site, errno: .ioError, calls: .from(1)))
        defer { SyscallFaults.disarm() }
        var runs = 0
        let result = SyscallFaults.exempting { call(&runs) }
        #expect(try result.get() == 7)
        #expect(SyscallFaults.tally.calls[Self.site] == nil)
        #expect(throws: SystemCallError.self) { try call(&runs).get() }
    }

    @Test func disarmedNothingFailsAndNothingIsCounted() throws {
        SyscallFaults.arm(.init(site: Self.site, errno: .ioError, calls: .from(1)))
        SyscallFaults.disarm()
        var runs = 0
        #expect(try call(&runs).get() == 7)
        SyscallFaults.arm(nil)
        #expect(try call(&runs).get() == 7, "armed without a plan only counts")
        #expect(SyscallFaults.disarm().calls[Self.site] == 1)
    }

    @Test(arguments: [
        ("open(/dev/input/event3)", "open"), ("ioctl(EVIOCSFF)", "ioctl(EVIOCSFF)"), ("write", "write"),
        ("udev_monitor_new_from_netlink(kernel)", "udev_monitor_new_from_netlink"),
        ("read(timerfd)", "read(timerfd)"), ("read(reports)", "read(reports)"), ("read", "read"),
    ])
    func aSiteIsTheCallWithoutItsPathButAnIoctlKeepsItsRequestAndATimersOrReportsReadItsName(call: String, site: String)
    {
        #expect(SyscallFaults.site(of: call) == site)
    }
}
