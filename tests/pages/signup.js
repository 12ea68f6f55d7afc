// A plain page (no WebMCP): the form shows what was submitted in #result, without navigating; the topic box,
// in no form, searches when Enter is pressed in it (as script-run search boxes do) and shows it in #found.
document.getElementById('signup').addEventListener('submit', (event) => {
  event.preventDefault();
  const data = new FormData(event.target);
  const result = document.getElementById('result');
  result.textContent = data.get('terms')
    ? `Welcome ${data.get('name')} <${data.get('email')}> on the ${data.get('plan')} plan`
    : 'Please accept the terms';
});

const topic = document.getElementById('topic');
topic.addEventListener('keydown', (event) => {
  if (event.key === 'Enter') document.getElementById('found').textContent = `Topics about ${topic.value}`;
});
