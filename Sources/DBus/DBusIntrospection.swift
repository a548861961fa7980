/// The `Introspect` XML of an exported object, made from its interfaces' descriptions.
enum DBusIntrospection {
    private static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// The standard interfaces every exported object has, described as the object's own are
    /// (libdbus answers `Peer`; the connection answers the others).
    private static func standardInterfaces() -> [DBusInterface] {
        let unused: (DBusMethodCall) -> Void = { _ in }
        return [
            DBusInterface(name: .introspectable, methods: [DBusMethod("Introspect", results: [.init("xml_data", "s")], handler: unused)]),
            DBusInterface(name: .peer, methods: [
                DBusMethod("Ping", handler: unused),
                DBusMethod("GetMachineId", results: [.init("machine_uuid", "s")], handler: unused),
            ]),
            DBusInterface(
                name: .properties,
                methods: [
                    DBusMethod("Get", arguments: [.init("interface_name", "s"), .init("property_name", "s")], results: [.init("value", "v")], handler: unused),
                    DBusMethod("GetAll", arguments: [.init("interface_name", "s")], results: [.init("props", "a{sv}")], handler: unused),
                    DBusMethod("Set", arguments: [.init("interface_name", "s"), .init("property_name", "s"), .init("value", "v")], handler: unused),
                ],
                signals: [DBusSignalMember("PropertiesChanged", arguments: [
                    .init("interface_name", "s"), .init("changed_properties", "a{sv}"), .init("invalidated_properties", "as"),
                ])]),
        ]
    }

    /// The document for an object with `interfaces` (`nil`: no object, only a node on the way to
    /// others) and the child nodes `children`.
    static func xml(interfaces: [DBusInterface]?, children: [String]) -> String {
        var text = header + "<node>\n"
        let standard = standardInterfaces()
        // A node on the way to objects is introspectable; an object has them all.
        for interface in interfaces.map({ standard + $0 }) ?? [standard[0]] { text += xml(interface) }
        for child in children { text += "  <node name=\"\(child)\"/>\n" }
        return text + "</node>\n"
    }

    private static func xml(_ interface: DBusInterface) -> String {
        var text = "  <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            let arguments = method.arguments.map { argument($0, direction: "in") }
                + method.results.map { argument($0, direction: "out") }
            text += element("method", name: method.name.rawValue, children: arguments)
        }
        for property in interface.properties {
            let annotation = property.emitsChange
                ? []
                : ["<annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"false\"/>"]
            text += element(
                "property", name: property.name, attributes: " type=\"\(property.signature)\" access=\"read\"",
                children: annotation)
        }
        for signal in interface.signals {
            text += element("signal", name: signal.name.rawValue, children: signal.arguments.map { argument($0, direction: nil) })
        }
        return text + "  </interface>\n"
    }

    private static func argument(_ argument: DBusArgument, direction: String?) -> String {
        let direction = direction.map { " direction=\"\($0)\"" } ?? ""
        return "<arg name=\"\(escaped(argument.name))\" type=\"\(escaped(argument.signature))\"\(direction)/>"
    }

    private static func element(_ tag: String, name: String, attributes: String = "", children: [String]) -> String {
        guard !children.isEmpty else { return "    <\(tag) name=\"\(escaped(name))\"\(attributes)/>\n" }
        var text = "    <\(tag) name=\"\(escaped(name))\"\(attributes)>\n"
        for child in children { text += "      \(child)\n" }
        return text + "    </\(tag)>\n"
    }

    /// `text` with the characters XML attributes cannot hold escaped.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
