/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Finds the TCP connections a script drives itself (SocketFlow): a socket
 * that connects and that no application the tracker knows owns.
 */
#ifndef WORMHOLE_SOCKET_FLOW_SOURCE_H
#define WORMHOLE_SOCKET_FLOW_SOURCE_H

#include "flow-source.h"

#include "ns3/ipv4-address.h"

#include <set>
#include <unordered_set>

namespace ns3
{

class Ipv4Header;
class Packet;
class TcpSocketBase;

/**
 * @brief The flow source of sockets: follows every TCP connection from its
 * SYN, whoever opened it (an application of the script's own, a test, the
 * raw socket API).
 *
 * A node's IPv4 stack is followed from the first time the node is looked at
 * (its SendOutgoing trace, in a baseline run as in an accelerated one): a SYN
 * leaving it names the socket that connects (its endpoints), found among its
 * TcpL4Protocol's sockets. A socket already connecting when its node is
 * first looked at (Connect called while the script set up) is found then.
 * Sockets of BulkSend and OnOff applications are the tracker's own flows,
 * and sockets a listener accepted send no SYN: neither becomes a flow.
 */
class SocketFlowSource : public FlowSource
{
  public:
    static TypeId GetTypeId();
    SocketFlowSource();
    ~SocketFlowSource() override;

    void DiscoverFlows(Ptr<Node> node) override;

  protected:
    void DoDispose() override;

  private:
    /** A packet leaves @p node: a SYN that opens a connection names a socket to follow. */
    void OnSendOutgoing(Ptr<Node> node,
                        const Ipv4Header& header,
                        Ptr<const Packet> packet,
                        uint32_t interface);
    /** Follow @p socket as a flow, unless an application the tracker knows owns it. */
    void Adopt(Ptr<Node> node, Ptr<TcpSocketBase> socket);

    std::unordered_set<uint32_t> m_nodesFollowed; //!< nodes whose IPv4 stack is followed
    std::set<Ptr<TcpSocketBase>> m_seen;          //!< sockets adopted or passed over
};

} // namespace ns3

#endif /* WORMHOLE_SOCKET_FLOW_SOURCE_H */
