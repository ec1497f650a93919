// A USB HID PID (Physical Interface Device) force-feedback joystick: no product, the shape the HID PID
// specification gives force-feedback devices, made so that the kernel's generic PID driver (hid-pidff, which
// usbhid starts for every HID device hid-generic binds) takes it: a two-axis joystick with eight buttons and the
// PID reports hid-pidff needs. The device keeps its own pool of effect blocks, smaller than the block index's
// range: when it is full it answers Create New Effect with "full", which the driver turns into `ENOSPC`, so the
// device, not the kernel, decides how many effects fit. Pure: the USB HID gadget (`HIDGadget`) carries the bytes.
//
// Every report is numbered (the id is the first byte on the interrupt endpoint and in SET_REPORT and
// GET_REPORT data alike). Value ranges are chosen so that hid-pidff's rescaling keeps the kernel's own numbers:
// levels are 16-bit -0x8000...0x7fff or 0...0x7fff, times 16-bit 0...0xffff ms.

/// The PID joystick's reports, by id.
package enum PIDReportID: UInt8, Sendable, CaseIterable {
    // Output reports (usbhid sends them on the interrupt OUT endpoint).
    case setEffect = 0x01
    case setEnvelope = 0x02
    case setPeriodic = 0x03
    case setConstant = 0x04
    case effectOperation = 0x05
    case blockFree = 0x06
    case deviceControl = 0x07
    case deviceGain = 0x08
    // Feature reports (control requests).
    case createNewEffect = 0x11
    case blockLoad = 0x12
    case pool = 0x13

    /// The report's length with its id.
    package var length: Int {
        switch self {
        case .setEffect: 13
        case .setEnvelope, .setPeriodic: 10
        case .setConstant: 4
        case .effectOperation: 4
        case .blockFree, .deviceControl, .createNewEffect: 2
        case .deviceGain: 3
        case .blockLoad: 5
        case .pool: 5
        }
    }
}

/// A USB HID PID joystick served as a USB HID device, driven by hid-pidff.
package struct PIDJoystick: HIDControllerModel {
    package var identity: HIDIdentity
    /// How many effect blocks the device holds at once (at most `blockIndexRange.upperBound`).
    package let capacity: Int
    /// The loaded effect blocks.
    package private(set) var loadedBlocks: Set<Int> = []
    /// The Block Load report's content: the answer to the last Create New Effect.
    private var lastLoad: (index: Int, status: PIDBlockLoadStatus) = (0, .error)

    /// pid.codes' test vendor and product: no driver but hid-generic claims it.
    package static let vendorID: UInt16 = 0x1209
    package static let productID: UInt16 = 0x0001
    /// The block indices the descriptor declares; hid-pidff offers `upperBound - lowerBound + 1` effect slots.
    package static let blockIndexRange: ClosedRange<Int> = 1...40
    /// The device's own pool by default: smaller than the slots the kernel offers.
    package static let defaultCapacity = 16
    package static let inputReportID: UInt8 = 0x01
    /// The USB strings: usbhid names the device "manufacturer product".
    package static let manufacturer = "LinuxHaptics"
    package static let product = "PID Joystick"

    /// Usage pages.
    static let genericDesktop: UInt16 = 0x01
    static let buttonPage: UInt16 = 0x09
    static let ordinalPage: UInt16 = 0x0a
    static let pidPage: UInt16 = 0x0f

    /// - Parameters:
    ///   - capacity: how many effect blocks the device holds; 1...40.
    ///   - name: the name usbhid makes of the USB strings ("manufacturer product").
    package init(capacity: Int = defaultCapacity, name: String = "\(manufacturer) \(product)", uniq: String = "") {
        self.capacity = min(max(capacity, 1), Self.blockIndexRange.upperBound)
        identity = HIDIdentity(
            bus: .usb, vendor: Self.vendorID, product: Self.productID, version: 0x0100, name: name,
            phys: "usb-dummy_hcd.0-1/input0", uniq: uniq, reportDescriptor: Self.reportDescriptor)
    }

    // MARK: Answers

    package mutating func getReport(id: UInt8, type: HIDReportType) -> [UInt8]? {
        switch (type, id) {
        case (.input, Self.inputReportID): return Self.neutralInputReport
        case (.feature, PIDReportID.blockLoad.rawValue): return blockLoadReport
        case (.feature, PIDReportID.pool.rawValue): return poolReport
        case (.feature, PIDReportID.createNewEffect.rawValue): return [id, 0]
        default: return nil
        }
    }

    /// Block Load: the block index, the status (1 success, 2 full, 3 error) and the free blocks.
    var blockLoadReport: [UInt8] {
        let status: UInt8 =
            switch lastLoad.status {
            case .success: 1
            case .full: 2
            case .error: 3
            }
        let free = UInt16(capacity - loadedBlocks.count)
        return [PIDReportID.blockLoad.rawValue, UInt8(lastLoad.index), status, UInt8(free & 0xff), UInt8(free >> 8)]
    }

    /// Pool: the pool's size (counted in effect blocks), the simultaneous effects (every block may play at
    /// once) and "device managed pool" set (hid-pidff refuses a device without it).
    var poolReport: [UInt8] {
        [PIDReportID.pool.rawValue, UInt8(capacity), 0, UInt8(capacity), 0x01]
    }

    /// The input report at rest: both axes centred, no button.
    package static let neutralInputReport: [UInt8] = [inputReportID, 0x80, 0x80, 0x00]

    package mutating func receive(_ report: [UInt8], via path: HIDOutputPath) -> HIDOutputResponse {
        guard var decoded = Self.decode(report) else { return .ignored }
        switch decoded.kind {
        case .createNewEffect:
            // The lowest free block: block 1 for the driver's first upload, so hid-pidff does not take block 1
            // for a built-in autocenter spring (it does when the first answer is block 2).
            if loadedBlocks.count < capacity,
                let free = Self.blockIndexRange.first(where: { !loadedBlocks.contains($0) })
            {
                loadedBlocks.insert(free)
                lastLoad = (free, .success)
                decoded.blockIndex = free
            } else {
                lastLoad = (0, .full)
            }
            decoded.status = lastLoad.status
        case .blockFree:
            if let index = decoded.blockIndex { loadedBlocks.remove(index) }
        case .deviceControl where decoded.control == .reset:
            loadedBlocks.removeAll()
        default:
            break
        }
        return HIDOutputResponse(pid: decoded)
    }

    // MARK: Decoding

    /// Decodes a PID report (its id first); nil for anything else (the wrong length, an unknown id).
    package static func decode(_ bytes: [UInt8]) -> PIDReport? {
        guard let first = bytes.first, let id = PIDReportID(rawValue: first), bytes.count >= id.length else {
            return nil
        }
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
        func s16(_ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(u16(offset)))) }
        func block() -> Int? { bytes[1] == 0 ? nil : Int(bytes[1]) }
        switch id {
        case .setEffect:
            var report = PIDReport(.setEffect, blockIndex: block())
            report.effectType = effectType(bytes[2])
            report.duration = u16(3)
            report.triggerRepeatInterval = u16(5)
            report.startDelay = u16(7)
            report.gain = Double(bytes[9]) / 255
            report.triggerButton = Int(bytes[10])
            report.direction = Double(bytes[12]) / 255
            return report
        case .setEnvelope:
            var report = PIDReport(.setEnvelope, blockIndex: block())
            report.attackLevel = u16(2)
            report.fadeLevel = u16(4)
            report.attackTime = u16(6)
            report.fadeTime = u16(8)
            return report
        case .setPeriodic:
            var report = PIDReport(.setPeriodic, blockIndex: block())
            report.magnitude = s16(2)
            report.offset = s16(4)
            // The report carries phase * 0x7fff / 0xffff: back to the kernel's scale, within 2.
            report.phase = Int((Double(u16(6)) * 0xffff / 0x7fff).rounded())
            report.period = u16(8)
            return report
        case .setConstant:
            var report = PIDReport(.setConstant, blockIndex: block())
            report.magnitude = s16(2)
            return report
        case .effectOperation:
            var report = PIDReport(.effectOperation, blockIndex: block())
            let operations: [PIDEffectOperation] = [.start, .startSolo, .stop]
            report.operation = (1...3).contains(bytes[2]) ? operations[Int(bytes[2]) - 1] : nil
            // A stop carries whatever loop count the driver last wrote: only a start's means anything.
            report.loopCount = report.operation == .stop ? nil : Int(bytes[3])
            return report
        case .blockFree:
            return PIDReport(.blockFree, blockIndex: block())
        case .deviceControl:
            var report = PIDReport(.deviceControl)
            let controls = PIDDeviceControl.allCases
            report.control = (1...controls.count).contains(Int(bytes[1])) ? controls[Int(bytes[1]) - 1] : nil
            return report
        case .deviceGain:
            var report = PIDReport(.deviceGain)
            report.gain = Double(min(u16(1), Self.deviceGainMaximum)) / Double(Self.deviceGainMaximum)
            return report
        case .createNewEffect:
            var report = PIDReport(.createNewEffect)
            report.effectType = effectType(bytes[1])
            return report
        case .blockLoad, .pool:
            return nil
        }
    }

    /// The Effect Type array's value: 1 the first listed type.
    static func effectType(_ value: UInt8) -> PIDEffectType? {
        let types = PIDEffectType.allCases
        return (1...types.count).contains(Int(value)) ? types[Int(value) - 1] : nil
    }

    /// The Device Gain field's logical maximum.
    static let deviceGainMaximum = 10000

    // MARK: The report descriptor

    /// A joystick application: input report 1 (X, Y, 8 buttons), the PID output reports 1-8 and the PID
    /// feature reports 0x11-0x13. Each PID report is a Logical collection named by the report's PID usage, its
    /// first field the Effect Block Index where it has one (hid-pidff finds a report by the collection around
    /// its first field).
    package static let reportDescriptor: [UInt8] = {
        let effectTypes = PIDEffectType.allCases.map(\.usage)
        let block = Int64(blockIndexRange.lowerBound)...Int64(blockIndexRange.upperBound)
        let signedLevel: ClosedRange<Int64> = -0x8000...0x7fff
        let level: ClosedRange<Int64> = 0...0x7fff
        let milliseconds: ClosedRange<Int64> = 0...0xffff
        // Seconds (SI linear, time exponent 1) with exponent -3: milliseconds.
        let secondsUnit: UInt32 = 0x1003
        var d = HIDDescriptorBuilder()
        d.usagePage(genericDesktop)
        d.collection(.application, usage: 0x04) { d in  // Joystick
            d.reportID(inputReportID)
            d.collection(.physical, usage: 0x01) { d in  // Pointer
                d.variables([0x30, 0x31], bits: 8, logical: 0...255, .input)  // X, Y
            }
            d.usagePage(buttonPage)
            d.variables((1...8).map { UInt16($0) }, bits: 1, logical: 0...1, .input)

            d.usagePage(pidPage)
            d.reportID(PIDReportID.setEffect.rawValue)
            d.collection(.logical, usage: 0x21) { d in  // Set Effect Report
                d.variables([0x22], bits: 8, logical: block, .output)  // Effect Block Index
                d.collection(.logical, usage: 0x25) { d in d.array(effectTypes, bits: 8, .output) }  // Effect Type
                d.unit(secondsUnit, exponent: -3)
                // Duration, Trigger Repeat Interval, Start Delay
                d.variables([0x50, 0x54, 0xa7], bits: 16, logical: milliseconds, .output)
                d.unit(0, exponent: 0)
                d.variables([0x52], bits: 8, logical: 0...255, .output)  // Gain
                d.variables([0x53], bits: 8, logical: 0...8, .output)  // Trigger Button
                d.variables([0x56], bits: 1, logical: 0...1, .output)  // Direction Enable
                d.padding(bits: 7, .output)
                d.collection(.logical, usage: 0x57) { d in  // Direction
                    d.usagePage(ordinalPage)
                    d.variables([0x01], bits: 8, logical: 0...255, .output)  // Instance 1
                    d.usagePage(pidPage)
                }
            }
            d.reportID(PIDReportID.setEnvelope.rawValue)
            d.collection(.logical, usage: 0x5a) { d in  // Set Envelope Report
                d.variables([0x22], bits: 8, logical: block, .output)
                d.variables([0x5b, 0x5d], bits: 16, logical: level, .output)  // Attack Level, Fade Level
                d.unit(secondsUnit, exponent: -3)
                d.variables([0x5c, 0x5e], bits: 16, logical: milliseconds, .output)  // Attack Time, Fade Time
                d.unit(0, exponent: 0)
            }
            d.reportID(PIDReportID.setPeriodic.rawValue)
            d.collection(.logical, usage: 0x6e) { d in  // Set Periodic Report
                d.variables([0x22], bits: 8, logical: block, .output)
                d.variables([0x70, 0x6f], bits: 16, logical: signedLevel, .output)  // Magnitude, Offset
                d.variables([0x71], bits: 16, logical: level, .output)  // Phase, 0x7fff a full cycle
                d.unit(secondsUnit, exponent: -3)
                d.variables([0x72], bits: 16, logical: milliseconds, .output)  // Period
                d.unit(0, exponent: 0)
            }
            d.reportID(PIDReportID.setConstant.rawValue)
            d.collection(.logical, usage: 0x73) { d in  // Set Constant Force Report
                d.variables([0x22], bits: 8, logical: block, .output)
                d.variables([0x70], bits: 16, logical: signedLevel, .output)  // Magnitude
            }
            d.reportID(PIDReportID.effectOperation.rawValue)
            d.collection(.logical, usage: 0x77) { d in  // Effect Operation Report
                d.variables([0x22], bits: 8, logical: block, .output)
                // Effect Operation: Op Effect Start, Op Effect Start Solo, Op Effect Stop
                d.collection(.logical, usage: 0x78) { d in d.array([0x79, 0x7a, 0x7b], bits: 8, .output) }
                d.variables([0x7c], bits: 8, logical: 0...255, .output)  // Loop Count
            }
            d.reportID(PIDReportID.blockFree.rawValue)
            d.collection(.logical, usage: 0x90) { d in  // PID Block Free Report
                d.variables([0x22], bits: 8, logical: block, .output)
            }
            d.reportID(PIDReportID.deviceControl.rawValue)
            d.collection(.logical, usage: 0x96) { d in  // PID Device Control
                // Enable Actuators, Disable Actuators, Stop All Effects, Device Reset, Pause, Continue
                d.array([0x97, 0x98, 0x99, 0x9a, 0x9b, 0x9c], bits: 8, .output)
            }
            d.reportID(PIDReportID.deviceGain.rawValue)
            d.collection(.logical, usage: 0x7d) { d in  // Device Gain Report
                d.variables([0x7e], bits: 16, logical: 0...Int64(deviceGainMaximum), .output)  // Device Gain
            }

            d.reportID(PIDReportID.createNewEffect.rawValue)
            d.collection(.logical, usage: 0xab) { d in  // Create New Effect Report
                d.collection(.logical, usage: 0x25) { d in d.array(effectTypes, bits: 8, .feature) }
            }
            d.reportID(PIDReportID.blockLoad.rawValue)
            d.collection(.logical, usage: 0x89) { d in  // PID Block Load Report
                d.variables([0x22], bits: 8, logical: block, .feature)
                // Block Load Status: Success, Full, Error
                d.collection(.logical, usage: 0x8b) { d in d.array([0x8c, 0x8d, 0x8e], bits: 8, .feature) }
                d.variables([0xac], bits: 16, logical: 0...0xffff, .feature)  // RAM Pool Available
            }
            d.reportID(PIDReportID.pool.rawValue)
            d.collection(.logical, usage: 0x7f) { d in  // PID Pool Report
                d.variables([0x80], bits: 16, logical: 0...0xffff, .feature)  // RAM Pool Size
                d.variables([0x83], bits: 8, logical: 0...255, .feature)  // Simultaneous Effects Max
                // Device Managed Pool, Shared Parameter Blocks
                d.variables([0xa9, 0xaa], bits: 1, logical: 0...1, .feature)
                d.padding(bits: 6, .feature)
            }
        }
        return d.bytes
    }()
}
