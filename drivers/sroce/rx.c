// SPDX-License-Identifier: GPL-2.0
/*
 * The receive stage: a RoCEv2 packet's headers parsed and bounds-checked,
 * its P_Key checked, and the packet handed to the one that acts on it: the
 * multicast group, a UD or UC QP's receive, an RC QP's completer
 * (responses) or responder (requests). Every header field is
 * bounds-checked before it is used, and a packet whose ICRC is wrong is
 * counted and dropped before anything acts on it. Runs with BHs off, from
 * the socket (net.c) or a local transmit.
 */
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "sroce.h"
#include "trace.h"
#include <sroce/wire.h>

/*
 * The P_Key table holds the default key alone, a full member: a packet's
 * key matches it when their low 15 bits agree (IBTA 10.9.3), whatever the
 * packet's membership bit says.
 */
static bool sroce_pkey_ok(u16 pkey)
{
	return (pkey & 0x7fff) == (SROCE_DEFAULT_PKEY & 0x7fff);
}

static bool sroce_is_response(u8 opcode)
{
	switch (opcode & SROCE_OP_MASK) {
	case SROCE_OP_READ_RESP_FIRST:
	case SROCE_OP_READ_RESP_MIDDLE:
	case SROCE_OP_READ_RESP_LAST:
	case SROCE_OP_READ_RESP_ONLY:
	case SROCE_OP_ACK:
	case SROCE_OP_ATOMIC_ACK:
		return true;
	}
	return false;
}

/*
 * Parse the BTH and extension headers of a packet whose UDP header is at
 * skb->data. Every length is checked against the packet before use.
 */
static bool sroce_parse(struct sk_buff *skb, struct sroce_pkt *pkt)
{
	unsigned int udpl = sizeof(struct udphdr), hlen, len = skb->len;
	struct sroce_bth bth;
	const u8 *p;

	if (!pskb_may_pull(skb, udpl + sizeof(bth)))
		return false;
	memcpy(&bth, skb->data + udpl, sizeof(bth));
	pkt->opcode = sroce_bth_opcode(&bth);
	pkt->hdrs = sroce_opcode_hdrs(pkt->opcode);
	hlen = sroce_opcode_hdr_len(pkt->opcode);
	if (!hlen || sroce_bth_tver(&bth))
		return false;
	pkt->padlen = sroce_bth_pad(&bth);
	if (len < udpl + hlen + pkt->padlen + SROCE_ICRC_LEN)
		return false;
	if (!pskb_may_pull(skb, udpl + hlen))
		return false;
	pkt->skb = skb;
	pkt->psn = sroce_bth_psn(&bth);
	pkt->qpn = sroce_bth_qpn(&bth);
	pkt->pkey = sroce_bth_pkey(&bth);
	pkt->ackreq = sroce_bth_ackreq(&bth);
	pkt->se = sroce_bth_se(&bth);
	pkt->payoff = udpl + hlen;
	pkt->paylen = len - pkt->payoff - pkt->padlen - SROCE_ICRC_LEN;
	if (pkt->paylen && !(pkt->hdrs & SROCE_HDR_PAYLOAD))
		return false;

	/* Extension headers in wire order (IBTA table 38). */
	p = skb->data + udpl + sizeof(bth);
	if (pkt->hdrs & SROCE_HDR_FETH) {
		memcpy(&pkt->feth, p, sizeof(pkt->feth));
		p += sizeof(pkt->feth);
	}
	if (pkt->hdrs & SROCE_HDR_RETH) {
		memcpy(&pkt->reth, p, sizeof(pkt->reth));
		p += sizeof(pkt->reth);
	}
	if (pkt->hdrs & SROCE_HDR_ATMETH) {
		memcpy(&pkt->atmeth, p, sizeof(pkt->atmeth));
		p += sizeof(pkt->atmeth);
	}
	if (pkt->hdrs & SROCE_HDR_AETH) {
		memcpy(&pkt->aeth, p, sizeof(pkt->aeth));
		p += sizeof(pkt->aeth);
	}
	if (pkt->hdrs & SROCE_HDR_ATMACK) {
		memcpy(&pkt->atmack, p, sizeof(pkt->atmack));
		p += sizeof(pkt->atmack);
	}
	if (pkt->hdrs & SROCE_HDR_DETH) {
		memcpy(&pkt->deth, p, sizeof(pkt->deth));
		p += sizeof(pkt->deth);
	}
	if (pkt->hdrs & SROCE_HDR_IMM) {
		memcpy(&pkt->imm, p, sizeof(pkt->imm));
		p += sizeof(pkt->imm);
	}
	if (pkt->hdrs & SROCE_HDR_IETH)
		pkt->ieth = get_unaligned_be32(p);
	return true;
}

/*
 * Whether a packet's ICRC may wait for the copy that places its payload,
 * which checks it in the same pass (resp.c, uc_ud.c, comp.c): payload that
 * is placed at an address the packet does not name itself (SEND, WRITE
 * after its first packet, READ response). A packet that names an address
 * (RETH) is checked before anything acts on it, so a corrupt address is
 * never written or read.
 */
static bool sroce_pkt_fusable(const struct sroce_pkt *pkt)
{
	return pkt->paylen && !(pkt->hdrs & SROCE_HDR_RETH);
}

/**
 * sroce_rx_local_psns() - the PSNs of a local packet, as its sender counted
 * @pkt: a packet a local QP handed over
 * @sender_pmtu: that QP's path MTU
 * @pmtu: the receiving QP's
 *
 * A local RC request or READ response longer than the path MTU is a chunk
 * (req.c, resp_tx.c): one packet for the PSNs of the wire packets it
 * replaces, which its sender counted in its own path MTU. Where the two
 * QPs' path MTUs differ, the chunk is refused as its first wire packet
 * would be (only a LAST or ONLY packet may be shorter than the path MTU,
 * none longer): pkt->mtu_mismatch makes the handlers treat its length as
 * wrong, so the requester sees an invalid request (or the READ responder
 * a malformed response) instead of PSNs and bytes counted in two units.
 * A single packet is checked against the receiver's path MTU as one from
 * the wire is. Only sroce builds local packets; from the wire a packet
 * longer than the path MTU is refused as ever.
 */
void sroce_rx_local_psns(struct sroce_pkt *pkt, u32 sender_pmtu, u32 pmtu)
{
	u32 n;

	if (pkt->paylen <= sender_pmtu)
		return;
	n = DIV_ROUND_UP(pkt->paylen, sender_pmtu);
	if (sender_pmtu == pmtu)
		pkt->more_psns = n - 1;
	else
		pkt->mtu_mismatch = true;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rx_local_psns);

/**
 * sroce_rcv() - process one RoCEv2 packet for a device
 * @sdev: the device it arrived on
 * @skb: the packet, skb->data at the UDP header; consumed
 * @local_pmtu: 0 from the wire; handed over by a local QP, its path MTU
 *	(the unit in which it counted the packet's PSNs); no ICRC to check
 *
 * Called with BHs off (softirq, or a local transmit).
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb, u32 local_pmtu)
{
	bool local = local_pmtu;
	unsigned int len = skb->len;
	struct sroce_pkt pkt;
	struct sroce_qp *qp;

	if (!sroce_parse(skb, &pkt)) {
		sroce_count(sdev, !local && sroce_rx_corrupt(skb) ?
			    SROCE_CNT_RX_ICRC_ERR : SROCE_CNT_RX_DROP_MALFORMED,
			    1);
		goto drop;
	}
	trace_sroce_rx(sdev, (void *)(skb->data + sizeof(struct udphdr)),
		       skb->len - sizeof(struct udphdr));
	pkt.sdev = sdev;
	pkt.more_psns = 0;
	pkt.mtu_mismatch = false;
	pkt.icrc_todo = false;
	if (!local && !sroce_pkt_icrc_begin(skb, &pkt)) {
		sroce_count(sdev, SROCE_CNT_RX_ICRC_ERR, 1);
		goto drop;
	}
	/*
	 * Every other packet is checked here, once: the handlers then check
	 * only a fusable packet they do not place (sroce_pkt_icrc_ok() is a
	 * no-op for one checked already).
	 */
	if (!sroce_pkt_fusable(&pkt) && !sroce_pkt_icrc_ok(&pkt))
		goto drop;

	if (!sroce_pkey_ok(pkt.pkey)) {
		if (sroce_pkt_icrc_ok(&pkt))
			sroce_count(sdev, SROCE_CNT_RX_DROP_PKEY, 1);
		goto drop;
	}

	/* Multicast: checked once here, then copied to every member. */
	if (pkt.qpn == SROCE_MCAST_QPN) {
		if ((pkt.opcode & SROCE_TR_MASK) != SROCE_TR_UD) {
			if (sroce_pkt_icrc_ok(&pkt))
				sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED, 1);
		} else if (sroce_pkt_icrc_ok(&pkt) &&
			   !sroce_mcast_rcv(sdev, &pkt)) {
			sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP, 1);
		}
		goto drop;
	}
	qp = sroce_qp_get(sdev, pkt.qpn);
	if (!qp) {
		if (sroce_pkt_icrc_ok(&pkt))
			sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP, 1);
		goto drop;
	}
	if (local)
		sroce_rx_local_psns(&pkt, local_pmtu, qp->pmtu);
	/* The QP's from here: in its counter when it is bound to one. */
	sroce_qp_count_pkt(qp, false, len);
	if ((pkt.opcode & SROCE_TR_MASK) == SROCE_TR_UD &&
	    sroce_qp_is_ud(qp)) {
		sroce_resp_ud(qp, &pkt);
	} else if ((pkt.opcode & SROCE_TR_MASK) == SROCE_TR_UC &&
		   qp->ibqp.qp_type == IB_QPT_UC) {
		sroce_resp_uc(qp, &pkt);
	} else if ((pkt.opcode & SROCE_TR_MASK) != SROCE_TR_RC ||
		   qp->ibqp.qp_type != IB_QPT_RC) {
		if (sroce_pkt_icrc_ok(&pkt))
			sroce_qp_count(qp, SROCE_CNT_RX_DROP_MALFORMED, 1);
	} else if (sroce_is_response(pkt.opcode)) {
		sroce_comp_rcv(qp, &pkt);
	} else {
		sroce_resp_rcv(qp, &pkt);
	}
	sroce_qp_put(qp);
	/*
	 * The handlers check the ICRC before they act on a packet; one they
	 * dropped unchecked is checked here, so a corrupt packet is counted
	 * as such whatever else was wrong with it.
	 */
	sroce_pkt_icrc_ok(&pkt);
	kfree_skb(skb);
	return;
drop:
	sroce_count(sdev, SROCE_CNT_RX_PKTS, 1);
	sroce_count(sdev, SROCE_CNT_RX_BYTES, len);
	kfree_skb(skb);
}
