/// The `Introspect` XML of an exported object, made from its interfaces' descriptions.
enum DBusIntrospection {
    private static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// The standard interfaces every exported object has.
    private static let standard = """
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="props" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>

        """

    private static let introspectable = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>

        """

    /// The document for an object with `interfaces` (`nil`: no object, only a node on the way to
    /// others) and the child nodes `children`.
    static func xml(interfaces: [DBusInterface]?, children: [String]) -> String {
        var text = header + "<node>\n" + introspectable
        if let interfaces {
            text += standard
            for interface in interfaces { text += xml(interface) }
        }
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
