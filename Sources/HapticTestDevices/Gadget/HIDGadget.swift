// Any HID controller model as a USB HID device: one interface of class 3 with its HID descriptor and an
// interrupt IN and OUT endpoint, served through FunctionFS. The host's usbhid binds it as it binds the real
// controller, fetches the report descriptor with GET_DESCRIPTOR, and sends output reports on the OUT endpoint
// (or as SET_REPORT control requests); the model answers and decodes them as it does over uhid. This is the
// real pad's path to its driver, and the only one for drivers that send reports from atomic context (usbhid
// queues them; uhid would sleep). Pure: the FunctionFS transport carries the bytes.

/// A USB function a gadget presents: descriptors for FunctionFS, answers to control requests, and the
/// decoding of what the host sends.
package protocol USBGadgetFunction: Sendable {
    /// The device the host enumerates.
    var identity: USBGadgetIdentity { get }
    /// The FunctionFS descriptor block (written first to ep0).
    var descriptorBlock: [UInt8] { get }
    /// The FunctionFS strings block (written second).
    var stringsBlock: [UInt8] { get }
    /// How to end a control request that reached the function.
    mutating func answer(_ request: FunctionFS.ControlRequest) -> FunctionFS.ControlReply
    /// The data stage of a host-to-device request that `answer` acknowledged: what it sets (motor levels, a
    /// decoded report), nil when it is nothing the function knows.
    mutating func receive(_ request: FunctionFS.ControlRequest, data: [UInt8]) -> HIDOutputResponse?
    /// A packet from the interrupt OUT endpoint, decoded as above.
    mutating func receive(packet: [UInt8]) -> HIDOutputResponse?
}

extension Xbox360Gadget: USBGadgetFunction {
    package mutating func receive(_ request: FunctionFS.ControlRequest, data: [UInt8]) -> HIDOutputResponse? { nil }
    package mutating func receive(packet: [UInt8]) -> HIDOutputResponse? {
        HIDOutputResponse(motors: Self.motors(for: packet))
    }
}

/// A HID controller model presented as a full-speed USB HID device.
package struct HIDGadget: USBGadgetFunction {
    package var model: any HIDControllerModel
    package var identity: USBGadgetIdentity

    /// - Parameters:
    ///   - manufacturer, product: the USB strings; usbhid names the device "manufacturer product".
    ///   - serialNumber: the serial string (usbhid makes it the device's uniq).
    package init(
        _ model: any HIDControllerModel, manufacturer: String, product: String, serialNumber: String,
        deviceRelease: UInt16
    ) {
        self.model = model
        identity = USBGadgetIdentity(
            vendorID: model.identity.vendor, productID: model.identity.product, deviceRelease: deviceRelease,
            usbVersion: 0x0110, deviceClass: 0, deviceSubclass: 0, deviceProtocol: 0, maxPacketSize0: 8,
            manufacturer: manufacturer, product: product, serialNumber: serialNumber, maxPowerMilliamps: 500,
            configurationAttributes: 0x80, maxSpeed: .full)
    }

    /// HID class requests (`bRequest` with type class).
    enum Request: UInt8 {
        case getReport = 0x01
        case setReport = 0x09
        case setIdle = 0x0a
    }

    static let getDescriptor: UInt8 = 0x06
    static let hidDescriptorType: UInt8 = 0x21
    static let reportDescriptorType: UInt8 = 0x22
    /// Both endpoints: 64-byte packets, polled every 10 ms (full speed counts milliseconds).
    static let packetSize: UInt16 = 64
    static let interval: UInt8 = 10

    /// The HID descriptor (9 bytes): HID 1.11, the model's country code, one report descriptor of its length.
    var hidDescriptor: [UInt8] {
        let length = UInt16(model.identity.reportDescriptor.count)
        return [
            9, Self.hidDescriptorType, 0x11, 0x01, UInt8(truncatingIfNeeded: model.identity.country), 1,
            Self.reportDescriptorType, UInt8(length & 0xff), UInt8(length >> 8),
        ]
    }

    package var descriptorBlock: [UInt8] {
        let set = [
            USBDescriptor.interface(number: 0, endpoints: 2, interfaceClass: 3, subclass: 0, protocol: 0),
            hidDescriptor,
            USBDescriptor.endpoint(
                address: 0x81, type: .interrupt, maxPacketSize: Self.packetSize, interval: Self.interval),
            USBDescriptor.endpoint(
                address: 0x01, type: .interrupt, maxPacketSize: Self.packetSize, interval: Self.interval),
        ]
        return FunctionFS.descriptorBlock(fullSpeed: set, highSpeed: [], extraFlags: .allControlRecipients)
    }

    package var stringsBlock: [UInt8] { FunctionFS.stringsBlock() }

    package mutating func answer(_ request: FunctionFS.ControlRequest) -> FunctionFS.ControlReply {
        let descriptorType = UInt8(request.value >> 8)
        if request.kind == 0, request.request == Self.getDescriptor, request.isDeviceToHost {
            switch descriptorType {
            case Self.reportDescriptorType:
                return .data(Array(model.identity.reportDescriptor.prefix(Int(request.length))))
            case Self.hidDescriptorType: return .data(Array(hidDescriptor.prefix(Int(request.length))))
            default: return .stall
            }
        }
        guard request.kind == 1, let hidRequest = Request(rawValue: request.request) else { return .stall }
        switch hidRequest {
        case .getReport:
            guard request.isDeviceToHost, let type = HIDReportType(usbValue: descriptorType),
                let report = model.getReport(id: UInt8(request.value & 0xff), type: type)
            else { return .stall }
            return .data(Array(report.prefix(Int(request.length))))
        case .setReport, .setIdle:
            return request.isDeviceToHost ? .stall : .acknowledge
        }
    }

    package mutating func receive(_ request: FunctionFS.ControlRequest, data: [UInt8]) -> HIDOutputResponse? {
        guard request.kind == 1, request.request == Request.setReport.rawValue,
            let type = HIDReportType(usbValue: UInt8(request.value >> 8))
        else { return nil }
        return model.receive(data, via: .setReport(type))
    }

    package mutating func receive(packet: [UInt8]) -> HIDOutputResponse? {
        model.receive(packet, via: .interrupt)
    }
}

extension HIDReportType {
    /// The report type in a GET_REPORT / SET_REPORT request's `wValue` high byte: 1 input, 2 output, 3 feature.
    init?(usbValue: UInt8) {
        switch usbValue {
        case 1: self = .input
        case 2: self = .output
        case 3: self = .feature
        default: return nil
        }
    }
}
