// The fault-injection hook every system call passes through: which call of a site fails, that an interrupted
// call is made again, that exempt threads are left alone, and what the tally counts. The calls here are to a
// site of their own, so other tests running meanwhile are never failed; the plan is process-wide, so each is armed
// through `withPlan`, which arms one at a time.
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
        var runs = 0
        let tally = try SyscallFaults.withPlan(.init(site: Self.site, errno: .ioError, calls: .nth(2))) { () throws in
            #expect(try call(&runs).get() == 7)
            #expect(throws: SystemCallError(.ioError, call: "\(Self.site)(/some/path)")) { try call(&runs).get() }
            #expect(try call(&runs).get() == 7)
        }.tally
        #expect(runs == 2, "a failed call never reaches the system")
        #expect(tally.calls[Self.site] == 3)
        #expect(tally.injected == 1)
    }

    @Test func everyCallFromTheNthFails() throws {
        var runs = 0
        let tally = try SyscallFaults.withPlan(.init(site: Self.site, errno: .noDevice, calls: .from(2))) { () throws in
            #expect(throws: Never.self) { try call(&runs).get() }
            for _ in 0..<3 {
                #expect(throws: SystemCallError(.noDevice, call: "\(Self.site)(/some/path)")) { try call(&runs).get() }
            }
        }.tally
        #expect(tally.injected == 3)
    }

    @Test func aPlanMatchingAPathCountsAndFailsOnlyTheCallsOfThatPath() throws {
        let call = { (path: String) in
            Result { () throws(SystemCallError) in try valueOrErrno("\(Self.site)(\(path))") { Int32(7) } }
        }
        let tally = try SyscallFaults.withPlan(.init(site: Self.site, errno: .ioError, calls: .nth(2), matching: "/b"))
        { () throws in
            #expect(throws: Never.self) { try call("/a").get() }
            #expect(throws: Never.self) { try call("/b").get() }
            #expect(throws: Never.self) { try call("/a").get() }
            #expect(throws: SystemCallError(.ioError, call: "\(Self.site)(/b)")) { try call("/b").get() }
            #expect(throws: Never.self) { try call("/b").get() }
        }.tally
        #expect(tally.calls[Self.site] == 5, "the tally still counts every call of the site")
        #expect(tally.injected == 1)
    }

    @Test func anInterruptedCallIsMadeAgainUnlessTheCallerWantsTheInterruption() throws {
        var runs = 0
        let tally = try SyscallFaults.withPlan(.init(site: Self.site, errno: .interrupted, calls: .nth(1))) {
            () throws in
            #expect(try call(&runs).get() == 7)
        }.tally
        #expect(runs == 1)
        #expect(tally.calls[Self.site] == 2, "the retry is a call of its own")

        _ = try SyscallFaults.withPlan(.init(site: Self.site, errno: .interrupted, calls: .nth(1))) { () throws in
            #expect(throws: SystemCallError(.interrupted, call: "\(Self.site)(/some/path)")) {
                try call(retrying: false, &runs).get()
            }
        }
    }

    @Test func anExemptThreadIsNeitherFailedNorCounted() throws {
        var runs = 0
        _ = try SyscallFaults.withPlan(.init(site: Self.site, errno: .ioError, calls: .from(1))) { () throws in
            let result = SyscallFaults.exempting { call(&runs) }
            #expect(try result.get() == 7)
            #expect(SyscallFaults.tally.calls[Self.site] == nil)
            #expect(throws: SystemCallError.self) { try call(&runs).get() }
        }
    }

    @Test func disarmedNothingFailsAndNothingIsCounted() throws {
        _ = try SyscallFaults.withPlan(.init(site: Self.site, errno: .ioError, calls: .from(1))) {}
        var runs = 0
        #expect(try call(&runs).get() == 7)
        let tally = try SyscallFaults.withPlan(nil) { () throws in
            #expect(try call(&runs).get() == 7, "armed without a plan only counts")
        }.tally
        #expect(tally.calls[Self.site] == 1)
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
