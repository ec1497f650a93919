// A wired Xbox 360 controller (045e:028e) as a USB gadget: what configfs is told about the device, the
// FunctionFS descriptor and string blocks written to `ep0`, the parser for the events `ep0` then delivers, the
// answers to control requests, and the decoder for the packets xpad sends on the interrupt OUT endpoint.
// Pure: no I/O, no Glibc; a FunctionFS transport carries the bytes.

// MARK: - configfs identity

/// The speed a gadget offers the host (configfs `max_speed`).
package enum USBGadgetSpeed: String, Sendable, Hashable {
    /// 12 Mbit/s: what a real Xbox 360 pad runs at; the host uses the full-speed descriptor set.
    case full = "full-speed"
    /// 480 Mbit/s: the host uses the high-speed descriptor set.
    case high = "high-speed"
}

/// One configfs attribute file, relative to the gadget directory, and the text written to it.
package struct ConfigfsAttribute: Sendable, Hashable {
    package var path: String
    package var value: String

    package init(_ path: String, _ value: String) {
        self.path = path
        self.value = value
    }
}

/// Who a USB gadget says it is: the device descriptor fields, strings and configuration that configfs
/// composes (the interfaces come from the FunctionFS descriptor block).
package struct USBGadgetIdentity: Sendable, Hashable {
    package var vendorID: UInt16
    package var productID: UInt16
    /// `bcdDevice`: the firmware release; xpad copies it into the input device's version.
    package var deviceRelease: UInt16
    /// `bcdUSB`.
    package var usbVersion: UInt16
    package var deviceClass: UInt8
    package var deviceSubclass: UInt8
    package var deviceProtocol: UInt8
    /// `bMaxPacketSize0`: the control endpoint's packet size.
    package var maxPacketSize0: UInt8
    package var manufacturer: String
    package var product: String
    package var serialNumber: String
    /// The configuration's `MaxPower`, in mA.
    package var maxPowerMilliamps: Int
    /// The configuration's `bmAttributes` (0x80 is always set; 0x20 is remote wakeup).
    package var configurationAttributes: UInt8
    package var maxSpeed: USBGadgetSpeed

    package init(
        vendorID: UInt16, productID: UInt16, deviceRelease: UInt16, usbVersion: UInt16 = 0x0200,
        deviceClass: UInt8, deviceSubclass: UInt8, deviceProtocol: UInt8, maxPacketSize0: UInt8 = 64,
        manufacturer: String, product: String, serialNumber: String, maxPowerMilliamps: Int = 100,
        configurationAttributes: UInt8 = 0x80, maxSpeed: USBGadgetSpeed = .high
    ) {
        self.vendorID = vendorID
        self.productID = productID
        self.deviceRelease = deviceRelease
        self.usbVersion = usbVersion
        self.deviceClass = deviceClass
        self.deviceSubclass = deviceSubclass
        self.deviceProtocol = deviceProtocol
        self.maxPacketSize0 = maxPacketSize0
        self.manufacturer = manufacturer
        self.product = product
        self.serialNumber = serialNumber
        self.maxPowerMilliamps = maxPowerMilliamps
        self.configurationAttributes = configurationAttributes
        self.maxSpeed = maxSpeed
    }

    /// The directories to create under the gadget directory, in order, before writing the attributes.
    package static func configfsDirectories(function: String) -> [String] {
        ["strings/0x409", "configs/c.1", "functions/ffs.\(function)"]
    }

    /// The attribute files to write, in order, relative to the gadget directory.
    package var configfsAttributes: [ConfigfsAttribute] {
        [
            ConfigfsAttribute("idVendor", Self.hex(vendorID)),
            ConfigfsAttribute("idProduct", Self.hex(productID)),
            ConfigfsAttribute("bcdDevice", Self.hex(deviceRelease)),
            ConfigfsAttribute("bcdUSB", Self.hex(usbVersion)),
            ConfigfsAttribute("bDeviceClass", Self.hex(UInt16(deviceClass), digits: 2)),
            ConfigfsAttribute("bDeviceSubClass", Self.hex(UInt16(deviceSubclass), digits: 2)),
            ConfigfsAttribute("bDeviceProtocol", Self.hex(UInt16(deviceProtocol), digits: 2)),
            ConfigfsAttribute("bMaxPacketSize0", String(maxPacketSize0)),
            ConfigfsAttribute("max_speed", maxSpeed.rawValue),
            ConfigfsAttribute("strings/0x409/manufacturer", manufacturer),
            ConfigfsAttribute("strings/0x409/product", product),
            ConfigfsAttribute("strings/0x409/serialnumber", serialNumber),
            ConfigfsAttribute("configs/c.1/MaxPower", String(maxPowerMilliamps)),
            ConfigfsAttribute("configs/c.1/bmAttributes", Self.hex(UInt16(configurationAttributes), digits: 2)),
        ]
    }

    /// The symlink that puts the function into the configuration: `link` points at `target` (both relative
    /// to the gadget directory).
    package static func configfsFunctionLink(function: String) -> (target: String, link: String) {
        ("functions/ffs.\(function)", "configs/c.1/ffs.\(function)")
    }

    /// What to remove, in order, after unbinding (`UDC` emptied) and unmounting FunctionFS: the link is
    /// unlinked, the rest are directories to rmdir; the gadget directory itself goes last.
    package static func configfsRemovalOrder(function: String) -> [String] {
        ["configs/c.1/ffs.\(function)", "configs/c.1", "functions/ffs.\(function)", "strings/0x409"]
    }

    /// "0x045e": configfs takes numbers in C notation.
    static func hex(_ value: UInt16, digits: Int = 4) -> String {
        let text = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

// MARK: - USB descriptors

/// Standard USB descriptors as bytes (USB 2.0 chapter 9 layouts, little-endian).
package enum USBDescriptor {
    /// The interface descriptor (9 bytes).
    package static func interface(
        number: UInt8, alternate: UInt8 = 0, endpoints: UInt8, interfaceClass: UInt8, subclass: UInt8,
        protocol interfaceProtocol: UInt8, stringIndex: UInt8 = 0
    ) -> [UInt8] {
        [9, 0x04, number, alternate, endpoints, interfaceClass, subclass, interfaceProtocol, stringIndex]
    }

    /// The endpoint transfer types (`bmAttributes` bits 0...1).
    package enum TransferType: UInt8, Sendable {
        case control = 0, isochronous = 1, bulk = 2, interrupt = 3
    }

    /// The endpoint descriptor (7 bytes). `address` has bit 7 set for IN (device to host).
    package static func endpoint(
        address: UInt8, type: TransferType, maxPacketSize: UInt16, interval: UInt8
    ) -> [UInt8] {
        [7, 0x05, address, type.rawValue, UInt8(maxPacketSize & 0xff), UInt8(maxPacketSize >> 8), interval]
    }
}

// MARK: - FunctionFS

/// FunctionFS (`linux/usb/functionfs.h`): the blocks written to `ep0` before binding, and the events read
/// from it afterwards.
package enum FunctionFS {
    /// `FUNCTIONFS_DESCRIPTORS_MAGIC_V2`: a descriptor block with a flags word.
    package static let descriptorsMagicV2: UInt32 = 3
    /// `FUNCTIONFS_STRINGS_MAGIC`.
    package static let stringsMagic: UInt32 = 2

    /// The flags word of a v2 descriptor block (`enum functionfs_flags`).
    package struct Flags: OptionSet, Sendable, Hashable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }

        package static let hasFullSpeedDescriptors = Flags(rawValue: 1)
        package static let hasHighSpeedDescriptors = Flags(rawValue: 2)
        package static let hasSuperSpeedDescriptors = Flags(rawValue: 4)
        /// Deliver control requests for every recipient (device ones included), not only those addressed to
        /// the function's interfaces and endpoints.
        package static let allControlRecipients = Flags(rawValue: 64)
    }

    /// The v2 descriptor block: header (magic, total length, flags), one count per speed set present, then
    /// each set's descriptors back to back. An empty set is left out (and its flag cleared).
    package static func descriptorBlock(
        fullSpeed: [[UInt8]], highSpeed: [[UInt8]], extraFlags: Flags = []
    ) -> [UInt8] {
        var flags = extraFlags
        if !fullSpeed.isEmpty { flags.insert(.hasFullSpeedDescriptors) }
        if !highSpeed.isEmpty { flags.insert(.hasHighSpeedDescriptors) }
        var body: [UInt8] = []
        for set in [fullSpeed, highSpeed] where !set.isEmpty { appendLE32(&body, UInt32(set.count)) }
        for set in [fullSpeed, highSpeed] { for descriptor in set { body += descriptor } }
        var block: [UInt8] = []
        appendLE32(&block, descriptorsMagicV2)
        appendLE32(&block, UInt32(12 + body.count))
        appendLE32(&block, flags.rawValue)
        return block + body
    }

    /// The strings block: header (magic, length, string count, language count), then per language its code
    /// and NUL-terminated UTF-8 strings. No strings gives the 16-byte header alone, with both counts 0.
    package static func stringsBlock(language: UInt16 = 0x0409, strings: [String] = []) -> [UInt8] {
        var body: [UInt8] = []
        if !strings.isEmpty {
            body += [UInt8(language & 0xff), UInt8(language >> 8)]
            for string in strings { body += Array(string.utf8) + [0] }
        }
        var block: [UInt8] = []
        appendLE32(&block, stringsMagic)
        appendLE32(&block, UInt32(16 + body.count))
        appendLE32(&block, UInt32(strings.count))
        appendLE32(&block, strings.isEmpty ? 0 : 1)
        return block + body
    }

    /// `enum usb_functionfs_event_type`.
    package enum EventType: UInt8, Sendable, Hashable {
        case bind = 0, unbind, enable, disable, setup, suspend, resume
    }

    /// A control request (`struct usb_ctrlrequest`, 8 bytes).
    package struct ControlRequest: Sendable, Hashable {
        /// `bmRequestType`: direction (bit 7), type (bits 5...6), recipient (bits 0...4).
        package var requestType: UInt8
        package var request: UInt8
        package var value: UInt16
        package var index: UInt16
        package var length: UInt16

        package init(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, length: UInt16) {
            self.requestType = requestType
            self.request = request
            self.value = value
            self.index = index
            self.length = length
        }

        /// True when the data stage goes to the host (the gadget answers by writing `ep0`).
        package var isDeviceToHost: Bool { requestType & 0x80 != 0 }
        /// 0 standard, 1 class, 2 vendor.
        package var kind: UInt8 { (requestType >> 5) & 0x03 }
        /// 0 device, 1 interface, 2 endpoint, 3 other.
        package var recipient: UInt8 { requestType & 0x1f }
    }

    /// One event read from `ep0` (`struct usb_functionfs_event`, 12 bytes: the 8-byte setup packet, which only
    /// SETUP fills, then the type byte and 3 bytes of padding).
    package struct Event: Sendable, Hashable {
        package var type: EventType
        /// The request, for `.setup` only.
        package var setup: ControlRequest?

        package init(type: EventType, setup: ControlRequest? = nil) {
            self.type = type
            self.setup = setup
        }
    }

    /// The size of one event; a read of `ep0` returns a whole number of them.
    package static let eventSize = 12

    /// Parses the events in one read of `ep0`; an unknown type or a trailing partial record is skipped.
    package static func parseEvents(_ bytes: [UInt8]) -> [Event] {
        stride(from: 0, to: bytes.count - eventSize + 1, by: eventSize).compactMap { start in
            let record = Array(bytes[start..<start + eventSize])
            guard let type = EventType(rawValue: record[8]) else { return nil }
            guard type == .setup else { return Event(type: type) }
            let request = ControlRequest(
                requestType: record[0], request: record[1], value: le16(record, 2), index: le16(record, 4),
                length: le16(record, 6))
            return Event(type: type, setup: request)
        }
    }

    /// How the gadget ends a control request after a SETUP event.
    package enum ControlReply: Sendable, Hashable {
        /// Device-to-host: write these bytes (at most `length` of them) to `ep0`.
        case data([UInt8])
        /// Host-to-device: read the data stage (`length` bytes, possibly 0) from `ep0`, which acknowledges.
        case acknowledge
        /// Halt the request: a 0-byte read of `ep0` for a device-to-host request, a 0-byte write for a
        /// host-to-device one (both fail with `EL2HLT`, which is the expected result).
        case stall
    }

    static func appendLE32(_ bytes: inout [UInt8], _ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xff)) }
    }

    static func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }
}

// MARK: - The Xbox 360 wired controller

/// What the driver sent on the interrupt OUT endpoint.
package enum Xbox360OutputPacket: Sendable, Hashable {
    /// `00 08 00 SS WW 00 00 00`: left (strong) and right (weak) motor, 0...255.
    case rumble(strong: UInt8, weak: UInt8)
    /// `01 03 NN`: the ring of lights around the guide button (2...5: player 1...4 blink then on).
    case led(UInt8)
    /// Anything else (the real pad ignores it).
    case unknown([UInt8])
}

/// A wired Xbox 360 controller (045e:028e, "Microsoft X-Box 360 pad" to xpad) presented as a USB gadget.
/// Only its gamepad interface (class 0xff, subclass 0x5d, protocol 0x01) is emulated: the real pad's headset,
/// expansion-port and security interfaces bind to no Linux driver.
package struct Xbox360Gadget: Sendable, Hashable {
    package var identity: USBGadgetIdentity
    /// The FunctionFS instance name: configfs function `ffs.<name>`, mount source of the functionfs mount.
    package var functionName: String

    /// The real pad's identity; `serialNumber` and `maxSpeed` may be overridden (the real pad is full speed).
    package init(
        serialNumber: String = Self.defaultSerialNumber, maxSpeed: USBGadgetSpeed = .full,
        functionName: String = "x360"
    ) {
        identity = USBGadgetIdentity(
            vendorID: 0x045e, productID: 0x028e, deviceRelease: 0x0114, usbVersion: 0x0200,
            deviceClass: 0xff, deviceSubclass: 0xff, deviceProtocol: 0xff, maxPacketSize0: 8,
            manufacturer: "\u{00A9}Microsoft Corporation", product: "Controller", serialNumber: serialNumber,
            maxPowerMilliamps: 500, configurationAttributes: 0xa0, maxSpeed: maxSpeed)
        self.functionName = functionName
    }

    /// The serial number string of the emulated pad.
    package static let defaultSerialNumber = "0E3D1A7"

    /// The interrupt IN endpoint (input reports). The host sees the address the UDC assigns (dummy_udc: 0x81).
    package static let inEndpointAddress: UInt8 = 0x81
    /// The interrupt OUT endpoint (rumble and LED commands). The real pad's is 0x01; dummy_udc assigns 0x02.
    /// FunctionFS names the endpoint files by descriptor order: `ep1` is IN, `ep2` is OUT.
    package static let outEndpointAddress: UInt8 = 0x01
    /// Both endpoints carry up to 32 bytes a packet.
    package static let maxPacketSize: UInt16 = 32

    /// The interface and its two endpoints for one speed. Polling periods are the real pad's, 4 ms in and
    /// 8 ms out: full speed counts milliseconds, high speed 2^(n-1) microframes of 125 µs.
    package static func descriptors(for speed: USBGadgetSpeed) -> [[UInt8]] {
        let (inInterval, outInterval): (UInt8, UInt8) = speed == .full ? (4, 8) : (6, 7)
        return [
            USBDescriptor.interface(
                number: 0, endpoints: 2, interfaceClass: 0xff, subclass: 0x5d, protocol: 0x01),
            USBDescriptor.endpoint(
                address: inEndpointAddress, type: .interrupt, maxPacketSize: maxPacketSize, interval: inInterval),
            USBDescriptor.endpoint(
                address: outEndpointAddress, type: .interrupt, maxPacketSize: maxPacketSize,
                interval: outInterval),
        ]
    }

    /// The class-specific descriptor (type 0x21) a real pad carries after its interface descriptor. It is
    /// deliberately left out of `descriptorBlock`: FunctionFS accepts type 0x21 only on HID and CCID
    /// interfaces and refuses the whole block with EINVAL otherwise; xpad never reads it.
    package static let vendorDescriptor: [UInt8] = [
        0x11, 0x21, 0x00, 0x01, 0x01, 0x25, 0x81, 0x14, 0x00, 0x00, 0x00, 0x00, 0x13, 0x01, 0x08, 0x00, 0x00,
    ]

    /// The block written first to `ep0`: full- and high-speed sets, and every control request delivered
    /// (the vendor requests a real pad answers are addressed to the device as well as to the interface).
    package var descriptorBlock: [UInt8] {
        FunctionFS.descriptorBlock(
            fullSpeed: Self.descriptors(for: .full), highSpeed: Self.descriptors(for: .high),
            extraFlags: .allControlRecipients)
    }

    /// The strings block written second: the interface names no string, so it is the empty block.
    package var stringsBlock: [UInt8] { FunctionFS.stringsBlock() }

    /// Classifies a packet from the OUT endpoint.
    package static func parseOutput(_ packet: [UInt8]) -> Xbox360OutputPacket {
        if packet.count == 8, packet[0] == 0x00, packet[1] == 0x08 {
            return .rumble(strong: packet[3], weak: packet[4])
        }
        if packet.count == 3, packet[0] == 0x01, packet[1] == 0x03 { return .led(packet[2]) }
        return .unknown(packet)
    }

    /// The motor levels a packet sets (0...1 of full drive), or nil for packets that set none (LED).
    package static func motors(for packet: [UInt8]) -> EmulatedMotorOutput? {
        guard case .rumble(let strong, let weak) = parseOutput(packet) else { return nil }
        return EmulatedMotorOutput(strong: Double(strong) / 255, weak: Double(weak) / 255)
    }

    /// A 20-byte input report: `00 14`, buttons (16 bits), left and right trigger (0...255), then the left
    /// and right sticks' X and Y (signed 16-bit, up is positive Y), then 6 unused bytes. The defaults are a
    /// pad at rest.
    package static func inputReport(
        buttons: UInt16 = 0, leftTrigger: UInt8 = 0, rightTrigger: UInt8 = 0,
        leftStick: (x: Int16, y: Int16) = (0, 0), rightStick: (x: Int16, y: Int16) = (0, 0)
    ) -> [UInt8] {
        var report: [UInt8] = [0x00, 0x14, UInt8(buttons & 0xff), UInt8(buttons >> 8), leftTrigger, rightTrigger]
        for axis in [leftStick.x, leftStick.y, rightStick.x, rightStick.y] {
            let bits = UInt16(bitPattern: axis)
            report += [UInt8(bits & 0xff), UInt8(bits >> 8)]
        }
        return report + [UInt8](repeating: 0, count: 6)
    }

    /// Answers a control request as the real pad does to the vendor requests Windows' driver makes (the 6.1
    /// xpad makes none); every other request that reaches the function is stalled.
    package func answer(_ request: FunctionFS.ControlRequest) -> FunctionFS.ControlReply {
        guard request.kind == 2, request.request == 0x01, request.isDeviceToHost else { return .stall }
        let reply: [UInt8]
        switch (request.recipient, request.value) {
        case (1, 0x0100): reply = Self.inputCapabilities
        case (1, 0x0000): reply = Self.outputCapabilities
        case (0, 0x0000): reply = Self.deviceIdentifier
        default: return .stall
        }
        return .data(Array(reply.prefix(Int(request.length))))
    }

    /// Which inputs exist, in the input report's layout (all buttons, both triggers, both sticks).
    static let inputCapabilities: [UInt8] = [
        0x00, 0x14, 0x3f, 0xf7, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xff, 0xc0, 0xff, 0xc0, 0xff, 0xc0, 0xff,
        0x00, 0x00, 0x00, 0x00,
    ]
    /// Which motors exist, in the rumble packet's layout (both, full range).
    static let outputCapabilities: [UInt8] = [0x00, 0x08, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00]
    /// A 4-byte device identifier.
    static let deviceIdentifier: [UInt8] = [0x0e, 0x3d, 0x1a, 0x70]
}
