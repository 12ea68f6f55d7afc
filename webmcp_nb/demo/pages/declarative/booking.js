// Declarative WebMCP: the <form toolname="bookTable" ...> in index.html is the tool.
//
// The browser builds the tool's input schema from the form fields. When an agent
// calls bookTable, the browser fills the fields and (because of toolautosubmit)
// dispatches a normal "submit" event with event.agentInvoked === true and an
// event.respondWith(promise) method. This one handler serves both humans and agents:
// it stays on the page, shows a confirmation, and answers the agent with JSON.

(() => {
  const $ = (id) => document.getElementById(id);
  const form = $('booking-form');

  if (!document.modelContext) {
    // Agents cannot see the form tool without WebMCP; tell the human. The form itself
    // is plain HTML, so it keeps working by hand.
    $('webmcp-missing').hidden = false;
  }

  /** Short deterministic code, e.g. "TD-4K9Q2Z", derived from the booking details. */
  function confirmationCode(booking) {
    const text = [booking.name, booking.guests, booking.date, booking.time, booking.seating].join('|');
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    return `TD-${(hash >>> 0).toString(36).toUpperCase().padStart(6, '0').slice(-6)}`;
  }

  function invalidFields() {
    return [...form.elements]
      .filter((field) => field.name && !field.checkValidity())
      .map((field) => `${field.name}: ${field.validationMessage}`);
  }

  function showConfirmation(booking, byAgent) {
    $('confirmation-title').textContent = `Booked for ${booking.name}!`;
    $('confirmation-text').textContent =
      `${booking.guests} ${booking.guests === 1 ? 'guest' : 'guests'} on ${booking.date} at ${booking.time}, ` +
      `${booking.seating} seating.` + (booking.notes ? ` Notes: ${booking.notes}` : '');
    $('confirmation-code').textContent = booking.confirmation;
    $('confirmation-source').textContent = byAgent ? 'Booked by an AI agent.' : 'Booked by you.';
    $('booking-confirmation').hidden = false;
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault(); // stay on this page, for humans and agents alike
    const byAgent = event.agentInvoked === true && typeof event.respondWith === 'function';

    const problems = invalidFields();
    if (problems.length) {
      form.reportValidity();
      if (byAgent) event.respondWith(Promise.resolve({ booked: false, errors: problems }));
      return;
    }

    const data = new FormData(form);
    const booking = {
      name: String(data.get('name')).trim(),
      guests: Number(data.get('guests')),
      date: String(data.get('date')),
      time: String(data.get('time')),
      seating: String(data.get('seating')),
      notes: String(data.get('notes') ?? '').trim(),
    };
    booking.confirmation = confirmationCode(booking);
    showConfirmation(booking, byAgent);

    // The browser only allows respondWith() on agent-invoked submits (it throws otherwise).
    if (byAgent) {
      event.respondWith(Promise.resolve({ booked: true, confirmation: booking.confirmation, ...booking }));
    }
  });
})();
